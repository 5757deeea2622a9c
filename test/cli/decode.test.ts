// `seam-stream decode`, end to end: the built command in a child process, fed through slow pipes.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TextAssembler } from '../../bindings/index.js';
import {
  anthropicCapture, awkwardCuts, ddgCapture, file, noStack, ollamaCapture, openaiCapture, piecesWriter, prng, responsesCapture, run, start, tempDir, writer,
} from './helpers.js';

const DELTAS = ['Hello', ', wörld ', '中', '文：', ' 👩', '\u200d💻', ' 🇯', '🇵', ' cafe', '\u0301', ' e', '\u0301\u0323', '!\r\n', 'Ω ', '\u1112\u1161', '\u11ab'];
const TEXT = DELTAS.join('').normalize('NFC');
const enc = new TextEncoder();

/** The offset of the n-th (0-based) occurrence of an ASCII needle. */
function nth(bytes: Uint8Array, needle: string, n: number): number {
  const s = Buffer.from(bytes).toString('latin1');
  let at = -1;
  for (let k = 0; k <= n; k++) {
    at = s.indexOf(needle, at + 1);
    if (at < 0) throw new Error(`no occurrence ${n} of ${needle}`);
  }
  return at;
}

/** The text a TextAssembler commits after these deltas (what the command has printed by then). */
function committedAfter(deltas: string[]): string {
  const a = new TextAssembler();
  return deltas.map((d) => a.push(d)).join('');
}

let dir: string;
beforeAll(() => {
  dir = tempDir();
});
afterAll(() => {
  /* the temporary directory is left to the system */
});

describe('decode: the text, as it commits', () => {
  it('prints text while the writer is still writing: the writer holds mid-stream until the text so far is on standard output', async () => {
    const bytes = openaiCapture(DELTAS);
    const f = file(dir, 'held.sse', bytes);
    // hold right after the event that carries DELTAS[5] ("\u200d💻"): 👩‍💻 is then held back (a ZWJ or a modifier may follow)
    const holdByte = nth(bytes, 'data: ', 6);
    const cuts = [...new Set([...awkwardCuts(bytes), holdByte])].sort((a, b) => a - b).filter((c) => c <= holdByte);
    const w = writer(f, cuts, 2, cuts.length);
    const d = start(['decode'], { stdin: w });
    const expected = committedAfter(DELTAS.slice(0, 6));
    expect(expected).toBe('Hello, wörld 中文： ');
    await d.waitStdout((o) => o === expected);
    expect(w.said()).not.toContain('done'); // the writer waits for us: the command printed before the input ended
    w.stdin!.write('go\n');
    const r = await d.done;
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: TEXT, stderr: '' });
    expect(w.said()).toBe('held\ndone\n');
  });

  const captures: [string, Uint8Array, string[]][] = [
    ['openai, CRLF and a BOM', openaiCapture(DELTAS, { crlf: true, bom: true }), ['decode']],
    ['openai-responses', responsesCapture(DELTAS), ['decode']],
    ['anthropic', anthropicCapture(DELTAS), ['decode']],
    ['ollama', ollamaCapture(DELTAS), ['decode']],
    ['ddg, CRLF', ddgCapture(DELTAS), ['decode']],
    ['ddg, LF, --format given', ddgCapture(DELTAS, { crlf: false }), ['decode', '--format', 'ddg']],
  ];
  for (const [name, bytes, args] of captures) {
    it(`${name}: cut at every awkward byte (${awkwardCuts(bytes).length} cuts), written piece by piece through a slow pipe`, async () => {
      const f = file(dir, `${name.replace(/\W+/g, '-')}.cap`, bytes);
      const w = writer(f, awkwardCuts(bytes), 1);
      const r = await run(args, { stdin: w });
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: TEXT, stderr: '' });
    });
  }

  it('plain formats: sse (event data), lines, ndjson, text', async () => {
    expect((await run(['decode', '--format', 'sse'], { input: 'data: a\ndata: b\n\n: c\n\nevent: x\ndata: é\r\n\r\n' })).stdout).toBe('a\nb\né\n');
    expect((await run(['decode', '--format', 'lines'], { input: 'a\r\nb\rc\n\nd' })).stdout).toBe('a\nb\nc\n\nd\n');
    expect((await run(['decode', '--format', 'ndjson'], { input: '{"a": 1}\n\n[2, 3]\n' })).stdout).toBe('{"a":1}\n[2,3]\n');
    const t = await run(['decode'], { input: 'plain cafe\u0301 text' });
    expect({ code: t.code, stdout: t.stdout, stderr: t.stderr }).toEqual({ code: 0, stdout: 'plain café text', stderr: '' });
  });

  it('a seeded random cutting of each capture gives the same text', async () => {
    const seed = 20261130;
    const next = prng(seed);
    for (const [name, bytes] of captures.slice(0, 3)) {
      const cuts = [...new Set(Array.from({ length: 40 }, () => 1 + Math.floor(next() * (bytes.length - 1))))].sort((a, b) => a - b);
      const f = file(dir, 'random.cap', bytes);
      const r = await run(['decode'], { stdin: writer(f, cuts, 0) });
      expect(r.stdout, `${name}, seed ${seed}, cuts ${cuts.join(',')}`).toBe(TEXT);
    }
  });

  it('standard output holds only the text; the report, the status line and messages go to standard error', async () => {
    const bytes = anthropicCapture(DELTAS);
    const r = await run(['decode', '--report', '--status', 'on', file(dir, 'a.sse', bytes)]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(TEXT);
    expect(r.stderr).toContain('seam-stream: report\n');
    expect(r.stderr).toContain(`  status        done, finish reason "end_turn"\n`);
    expect(r.stderr).toContain(`  usage         {"input_tokens":12,"output_tokens":${DELTAS.length}}\n`);
    expect(r.stderr).toContain(`  read          ${bytes.length.toLocaleString('en-US')} bytes, ${DELTAS.length + 6} events, 1 heartbeat\n`);
  });

  it('--report --json: counts, SHA-256, NFC, status, finish reason, usage', async () => {
    const bytes = openaiCapture(DELTAS);
    const r = await run(['decode', '--report', '--json', file(dir, 'o.sse', bytes)]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(TEXT);
    const rep = JSON.parse(r.stderr);
    const { createHash } = await import('node:crypto');
    expect({ ...rep, seconds: 0 }).toEqual({
      input: join(dir, 'o.sse'), format: 'openai', sniffed: true, status: 'done', finishReason: 'stop',
      usage: { prompt_tokens: 9, completion_tokens: DELTAS.length, total_tokens: 9 + DELTAS.length },
      bytes: bytes.length, events: DELTAS.length + 3, heartbeats: 2,
      utf8Bytes: Buffer.byteLength(TEXT), codePoints: [...TEXT].length, utf16Units: TEXT.length,
      graphemes: [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(TEXT)].length,
      normalizationChanged: true, sha256: createHash('sha256').update(TEXT).digest('hex'), reasoningBytes: 0, toolCalls: [], seconds: 0, exitCode: 0,
    });
  });

  it("a model's refusal: not on standard output; said on standard error, in the report, and after its event with --events", async () => {
    const oa = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const body = oa({ role: 'assistant', content: null, refusal: '' }) + oa({ refusal: 'No, ' }) + oa({ refusal: 'sorry "é".' }) + oa({}, 'stop') + 'data: [DONE]\n\n';
    const path = file(dir, 'refusal.sse', body);
    const r = await run(['decode', '--report', path]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('seam-stream: the model refused: No, sorry "é".\n');
    expect(r.stderr).toContain('  refusal       "No, sorry \\"é\\"."\n');
    const j = await run(['decode', '--report', '--json', path]);
    expect(JSON.parse(j.stderr).refusal).toBe('No, sorry "é".');
    const e = await run(['decode', '--events', path]);
    expect(e.stdout.split('\n').filter((l) => l.startsWith('{"refusal"'))).toEqual(['{"refusal":"No, "}', '{"refusal":"sorry \\"é\\"."}']);
    expect(e.stderr).not.toContain('refused');
  });

  it("a Responses shell call for the client: in the report with its item type, and in --events with it", async () => {
    const rs = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
    const shell = { id: 'sh_1', type: 'shell_call', call_id: 'call_sh1', action: { commands: ['ls "a b"'], timeout_ms: null, max_output_length: null }, environment: { type: 'local' } };
    const body = rs({ type: 'response.created', response: { id: 'r', status: 'in_progress', output: [] } })
      + rs({ type: 'response.output_item.added', output_index: 0, item: { ...shell, status: 'in_progress' } })
      + rs({ type: 'response.output_item.done', output_index: 0, item: { ...shell, status: 'completed' } })
      + rs({ type: 'response.completed', response: { id: 'r', status: 'completed', output: [] } });
    const path = file(dir, 'shell.sse', body);
    const args = '{"action":{"commands":["ls \\"a b\\""],"timeout_ms":null,"max_output_length":null},"environment":{"type":"local"}}';
    const r = await run(['decode', '--report', '--format', 'openai-responses', path]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`  tool calls    0: shell [shell_call] (call_sh1) ${args} (valid JSON)\n`);
    const e = await run(['decode', '--events', '--format', 'openai-responses', path]);
    // (said whole by its item's end)
    expect(e.stdout.split('\n').filter((l) => l.startsWith('{"toolCall"'))).toEqual([
      `{"toolCall":{"index":0,"id":"call_sh1","name":"shell","arguments":${JSON.stringify(args)},"done":true,"valid":true,"type":"shell_call"}}`,
    ]);
  });

  it('the sources an answer cites: in the report, and after their event with --events', async () => {
    const rs = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
    const cite = { type: 'url_citation', url: 'https://example.org/é', title: 'Café "B"', start_index: 4, end_index: 9 };
    const body = rs({ type: 'response.created', response: { id: 'r', status: 'in_progress', output: [] } })
      + rs({ type: 'response.output_text.delta', item_id: 'm', output_index: 0, content_index: 0, delta: 'See café.' })
      + rs({ type: 'response.output_text.annotation.added', item_id: 'm', output_index: 0, content_index: 0, annotation_index: 0, annotation: cite })
      + rs({ type: 'response.completed', response: { id: 'r', status: 'completed', output: [] } });
    const path = file(dir, 'cites.sse', body);
    const r = await run(['decode', '--report', '--format', 'openai-responses', path]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('See café.');
    expect(r.stderr).toContain('  citations     0: https://example.org/é (Café "B")\n');
    const j = await run(['decode', '--report', '--json', '--format', 'openai-responses', path]);
    expect(JSON.parse(j.stderr).citations).toEqual([{ url: cite.url, title: cite.title, source: cite }]);
    const e = await run(['decode', '--events', '--format', 'openai-responses', path]);
    expect(e.stdout.split('\n').filter((l) => l.startsWith('{"citation"'))).toEqual([JSON.stringify({ citation: { source: cite, url: cite.url, title: cite.title } })]);
  });

  it('--events: one JSON object per event, comments included', async () => {
    const r = await run(['decode', '--events', '--format', 'sse'], { input: ': hi\n\nevent: t\nid: 7\ndata: a\ndata: b\n\ndata: c\n\n' });
    expect(r.stdout).toBe('{"comment":"hi"}\n{"type":"t","data":"a\\nb","id":"7"}\n{"type":"message","data":"c","id":"7"}\n');
    const o = await run(['decode', '--events', file(dir, 'e.ndjson', ollamaCapture(['a']))]);
    expect(o.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l).message.content)).toEqual(['a', '']);
    expect(o.code).toBe(0);
  });

  it('--save writes the whole text at the end, atomically (no temporary file left)', async () => {
    const out = join(dir, 'saved.txt');
    const r = await run(['decode', '--save', out, file(dir, 's.sse', openaiCapture(DELTAS))]);
    expect({ code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({ code: 0, stderr: '', stdout: TEXT });
    expect(readFileSync(out, 'utf8')).toBe(TEXT);
    expect(readdirSync(dir).filter((f) => f.startsWith('.saved.txt.'))).toEqual([]);
  });
});

describe('decode: endings, messages and exit codes', () => {
  const expectEnd = (r: { code: number | null; stderr: string }, code: number, message: RegExp | string) => {
    expect(r.code, r.stderr).toBe(code);
    if (typeof message === 'string') expect(r.stderr).toContain(message);
    else expect(r.stderr).toMatch(message);
    expect(noStack(r.stderr), r.stderr).toBe(true);
  };

  it('3: each format without its completion is truncated, its text printed', async () => {
    const cases: [Uint8Array, string][] = [
      [openaiCapture(DELTAS, { done: false }), '(data: [DONE])'],
      [responsesCapture(DELTAS, { completed: false }), '(a response.completed event)'],
      [anthropicCapture(DELTAS, { stop: false }), '(a message_stop event)'],
      [ollamaCapture(DELTAS, { done: false }), '(a line with "done": true)'],
      [ddgCapture(DELTAS, { done: false }), '(a [DONE] line)'],
    ];
    for (const [bytes, what] of cases) {
      const r = await run(['decode', file(dir, 'cut.cap', bytes)]);
      expectEnd(r, 3, `seam-stream: The stream ended without its completion ${what} after ${bytes.length} bytes: the text is incomplete (--allow-truncated takes the text as it is, exit 0)\n`);
      expect(r.stdout).toBe(TEXT);
    }
    const sse = await run(['decode', '--format', 'sse'], { input: 'data: a\n\ndata: b\n' });
    expectEnd(sse, 3, 'seam-stream: the stream ended inside an event, without the blank line that ends it, after 17 bytes: that event was not dispatched (--allow-truncated takes the text as it is, exit 0)\n');
    expect(sse.stdout).toBe('a\n');
    const allowed = await run(['decode', '--allow-truncated', file(dir, 'cut.cap', openaiCapture(['x'], { done: false }))]);
    expectEnd(allowed, 0, 'seam-stream: warning: The stream ended without its completion');
  });

  it('2: invalid UTF-8 names its byte offset, after the text decoded before it', async () => {
    const good = openaiCapture(['Ab', 'cé', 'd'], { done: false });
    const bad = Buffer.concat([good, Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"x\xff"}}]}\n\n', 'latin1')]);
    const at = bad.indexOf(0xff);
    const r = await run(['decode', file(dir, 'bad.sse', bad)]);
    expectEnd(r, 2, `seam-stream: Invalid UTF-8 at byte offset ${at} (bytes from there: FF 22 7D 7D) (--lenient reads it as U+FFFD and goes on)\n`);
    expect(r.stdout).toBe('Abcéd');
    const t = await run(['decode'], { input: Buffer.from([0x61, 0x65, 0xcc, 0x81, 0xc3]) });
    expectEnd(t, 2, 'Truncated UTF-8: the stream ended inside a character that starts at byte offset 4 (C3) (--lenient reads it as U+FFFD and goes on)\n');
    expect(t.stdout).toBe('aé');
  });

  it('4: a limit names the option that raises it', async () => {
    const r = await run(['decode', '--max-event-bytes', '1KiB', file(dir, 'l.sse', openaiCapture(['x'.repeat(2000)]))]);
    expectEnd(r, 4, /exceeds maxEventBytes \(1024 bytes\) at the line starting at byte offset \d+; nothing past the limit was buffered \(raise it with --max-event-bytes\)\n/);
    const l = await run(['decode', '--format', 'lines', '--max-line-bytes', '8'], { input: 'short\nmuch too long\n' });
    expectEnd(l, 4, 'seam-stream: Line starting at byte offset 6 is longer than maxLineBytes (8 bytes); nothing past the limit was buffered (raise it with --max-line-bytes)\n');
    expect(l.stdout).toBe('short\n');
    const t = await run(['decode', '--max-text-bytes', '4'], { input: 'abcdefgh' });
    expectEnd(t, 4, '(raise it with --max-text-bytes)');
  });

  it("5: a provider's error event or error body, with its message", async () => {
    const ev = (t: string, d: unknown) => `event: ${t}\ndata: ${JSON.stringify(d)}\n\n`;
    const anthropic = ev('message_start', { type: 'message_start', message: { usage: { input_tokens: 1 } } })
      + ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Par' } })
      + ev('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    const a = await run(['decode'], { input: anthropic });
    // the offset of the error event's data
    expectEnd(a, 5, `seam-stream: The provider sent an error at byte offset ${anthropic.indexOf('data: {"type":"error"') + 6}: Overloaded (overloaded_error)\n`);
    expect(a.stdout).toBe('Par');
    const body = JSON.stringify({ error: { message: 'Incorrect API key provided: sk-…', type: 'invalid_request_error', code: 'invalid_api_key' } }, null, 2);
    const b = await run(['decode', '--format', 'openai'], { input: body });
    expectEnd(b, 5, 'seam-stream: The provider answered with an error body: Incorrect API key provided: sk-… (invalid_api_key)\n');
    const sniffedBody = await run(['decode'], { input: body });
    expectEnd(sniffedBody, 5, 'The provider answered with an error body');
    const ollama = '{"model":"m","message":{"content":"a"},"done":false}\n{"error":"model \'x\' not found"}\n';
    const o = await run(['decode'], { input: ollama });
    expectEnd(o, 5, `seam-stream: The provider sent an error at byte offset ${ollama.indexOf('{"error"')}: model 'x' not found\n`);
    const resp = 'event: response.failed\ndata: {"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"The model failed"}}}\n\n';
    expectEnd(await run(['decode'], { input: resp }), 5, `seam-stream: The provider sent an error at byte offset ${resp.indexOf('{')}: The model failed (server_error)\n`);
    const ddg = 'data: {"message":"Hi"}\r\n\r\ndata: {"action":"error","status":429,"type":"ERR_CONVERSATION_LIMIT"}\r\n\r\n';
    expectEnd(await run(['decode', '--format', 'ddg'], { input: ddg }), 5, `seam-stream: The provider sent an error at byte offset ${ddg.indexOf('data: {"action"') + 6}: ERR_CONVERSATION_LIMIT (status 429)\n`);
  });

  it('6: an event or NDJSON line that is not JSON, with its offset or line', async () => {
    const good = 'data: {"choices":[{"index":0,"delta":{"content":"ok"}}]}\n\n';
    const r = await run(['decode'], { input: `${good}: c\ndata: {"choices":[\n\ndata: [DONE]\n\n` });
    // the offset where the JSON stops being valid: here the end of the event's data
    expectEnd(r, 6, `seam-stream: Invalid JSON at byte offset ${good.length + ': c\ndata: {"choices":['.length}, in the event whose data begins at byte offset ${good.length + ': c\ndata: '.length}: the document ends too early\n`);
    expect(r.stdout).toBe('ok');
    const o = await run(['decode', '--format', 'ollama'], { input: '{"response":"a","done":false}\n\n{"response":\n' });
    expectEnd(o, 6, 'seam-stream: Invalid JSON at byte offset 43, on line 3, whose JSON begins at byte offset 31: the document ends too early\n');
    expect(o.stdout).toBe('a');
    const n = await run(['decode', '--format', 'ndjson'], { input: '{"a":1}\n{"a":\n' });
    expectEnd(n, 6, 'seam-stream: Invalid JSON on line 2 (byte offset 8): ');
  });

  it('--idle-timeout: reasoning is progress (a model that thinks longer than the timeout before its text is read to its end), and Anthropic\'s pings are not (exit 7)', async () => {
    const ev = (delta: Record<string, string>) => `data: {"choices":[{"index":0,"delta":${JSON.stringify(delta)}}]}\n\n`;
    const events = [...Array.from({ length: 8 }, (_, i) => ev({ reasoning_content: `step ${i}. ` })), ev({ content: 'Done.' }), 'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n', 'data: [DONE]\n\n'];
    // 150 ms between events: 1.2 s of reasoning, twice the timeout
    const w = piecesWriter(dir, 'thinking.sse', events, 150);
    const r = await start(['decode', '--idle-timeout', '0.6', '--format', 'openai'], { stdin: w }).done;
    expect([r.code, r.stdout, r.stderr]).toEqual([0, 'Done.', '']);
    const a = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const pings = [a('message_start', { message: { id: 'm', type: 'message', role: 'assistant', content: [], model: 'c', usage: { input_tokens: 1, output_tokens: 1 } } }), ...Array.from({ length: 10 }, () => a('ping', {}))];
    const p = await start(['decode', '--idle-timeout', '0.6', '--format', 'anthropic'], { stdin: piecesWriter(dir, 'pings.sse', pings, 150) }).done;
    expect(p.code).toBe(7);
    const m = /^seam-stream: nothing but keep-alives and empty events for 0\.6 s \(--idle-timeout\), after [\d,]+ bytes, (\d+) events and (\d+) heartbeats: stopped\n/.exec(p.stderr);
    expect(m, p.stderr).not.toBeNull();
    // (the message's start, then pings alone: at least three in the 0.6 s, and the command stopped before the last)
    expect(Number(m![1])).toBe(Number(m![2]) + 1);
    expect(Number(m![2])).toBeGreaterThanOrEqual(3);
    expect(Number(m![2])).toBeLessThan(10);
  });

  it('--idle-timeout: events that say nothing of the answer (`{}`, an empty delta), sent for ever, are not progress (exit 7)', async () => {
    const ev = (delta: Record<string, string>) => `data: {"choices":[{"index":0,"delta":${JSON.stringify(delta)}}]}\n\n`;
    const events = [ev({ content: 'Bonjour' }), ...Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? 'data: {}\n\n' : ev({ content: '' })))];
    const p = await start(['decode', '--idle-timeout', '0.6', '--format', 'openai'], { stdin: piecesWriter(dir, 'empty.sse', events, 150) }).done;
    expect([p.code, p.stdout]).toEqual([7, 'Bonjou']); // (the text committed: its last cluster held, as a stream stopped so leaves it)
    const m = /^seam-stream: nothing but keep-alives and empty events for 0\.6 s \(--idle-timeout\), after [\d,]+ bytes, (\d+) events and 0 heartbeats: stopped\n/.exec(p.stderr);
    expect(m, p.stderr).not.toBeNull();
    // (the text's event, then empty ones: at least three in the 0.6 s, and the command stopped before the last)
    expect(Number(m![1])).toBeGreaterThanOrEqual(4);
    expect(Number(m![1])).toBeLessThan(11);
  });

  it('--idle-timeout: a read that holds a keep-alive comment and a reasoning event is progress (the event is, whatever comment came with it)', async () => {
    const ev = (delta: Record<string, string>) => `data: {"choices":[{"index":0,"delta":${JSON.stringify(delta)}}]}\n\n`;
    // (a proxy's keep-alive comment right before each reasoning delta, both in one read)
    const reads = [...Array.from({ length: 8 }, (_, i) => `: keep-alive\n\n${ev({ reasoning_content: `step ${i}. ` })}`), ev({ content: 'Done.' }),
      'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'];
    // 150 ms between reads: 1.2 s of reasoning, twice the timeout
    const w = piecesWriter(dir, 'thinking-kept-alive.sse', reads, 150);
    const r = await start(['decode', '--idle-timeout', '0.6', '--format', 'openai'], { stdin: w }).done;
    expect([r.code, r.stdout, r.stderr]).toEqual([0, 'Done.', '']);
  });

  it('7: --idle-timeout ends the command when no text comes, whatever heartbeats arrive; the status line counts them', async () => {
    const bytes = openaiCapture(DELTAS.slice(0, 6), { done: false });
    const w = writer(file(dir, 'idle.sse', bytes), [], 0, -1, 40);
    const d = start(['decode', '--idle-timeout', '0.6', '--status', 'on'], { stdin: w });
    const expected = committedAfter(DELTAS.slice(0, 6));
    await d.waitStdout((o) => o === expected);
    const textAt = performance.now();
    const r = await d.done;
    const idle = performance.now() - textAt;
    w.kill();
    expect(r.code).toBe(7);
    expect(r.stdout).toBe(expected);
    expect(idle).toBeGreaterThanOrEqual(550);
    const m = /seam-stream: nothing but keep-alives and empty events for 0\.6 s \(--idle-timeout\), after [\d,]+ bytes, \d+ events and (\d+) heartbeats: stopped\n/.exec(r.stderr);
    expect(m, r.stderr).not.toBeNull();
    expect(Number(m![1])).toBeGreaterThanOrEqual(2 + 5); // the capture's own two, and at least five while waiting
    expect(r.stderr).toContain('seam-stream: nothing was saved (--save FILE keeps the text committed so far)\n');
    const statuses = r.stderr.split('\r').map((s) => /· (\d+) heartbeats · last text ([\d.]+) s ago/.exec(s)).filter((x) => x !== null);
    expect(statuses.length).toBeGreaterThanOrEqual(2);
    const last = statuses[statuses.length - 1]!;
    expect(Number(last[1])).toBeGreaterThan(Number(statuses[0]![1]));
    expect(Number(last[2])).toBeGreaterThanOrEqual(0.3);
  });

  // (SIGTERM as `timeout` sends it: before, Node's default ended the process at once, and --save saved nothing)
  for (const [signal, exit, said] of [['SIGINT', 130, 'interrupted \\(Ctrl\\+C\\)'], ['SIGTERM', 143, 'terminated \\(SIGTERM\\)']] as const) for (const save of [true, false]) {
    it(`${exit}: ${signal} mid-stream stops at once${save ? '; --save holds exactly the text committed so far, said to be partial' : ', and says nothing was saved'}`, async () => {
      const bytes = anthropicCapture(DELTAS);
      const hold = nth(bytes, 'event: content_block_delta', 10); // DELTAS[0..9] read, DELTAS[10] not
      const w = writer(file(dir, 'int.sse', bytes), [...awkwardCuts(bytes).filter((c) => c < hold), hold], 1, awkwardCuts(bytes).filter((c) => c < hold).length + 1);
      const out = join(dir, `partial-${signal}-${save}.txt`);
      const d = start(['decode', ...(save ? ['--save', out] : [])], { stdin: w });
      const expected = committedAfter(DELTAS.slice(0, 10));
      await d.waitStdout((o) => o === expected);
      expect(w.said()).not.toContain('done');
      d.child.kill(signal);
      const r = await d.done;
      w.kill();
      expect(r.code).toBe(exit);
      expect(r.stdout).toBe(expected);
      expect(r.stderr).toMatch(new RegExp(`^seam-stream: ${said} after [\\d,]+ bytes and \\d+ events: reading stopped\n`));
      if (save) {
        expect(r.stderr).toContain(`seam-stream: the partial text (${Buffer.byteLength(expected)} bytes, all that was committed) was saved to ${out}\n`);
        expect(readFileSync(out, 'utf8')).toBe(r.stdout);
      } else {
        expect(r.stderr).toContain('seam-stream: nothing was saved (--save FILE keeps the text committed so far)\n');
        expect(existsSync(out)).toBe(false);
      }
      expect(noStack(r.stderr)).toBe(true);
    });
  }

  it('0: a closed standard output (… | head -c 10) ends the command quietly', async () => {
    const deltas = Array.from({ length: 20000 }, (_, i) => `word${i} `);
    const f = file(dir, 'big.sse', openaiCapture(deltas));
    const { spawnSync } = await import('node:child_process');
    const p = spawnSync('bash', ['-c', `set -o pipefail; node dist/cli.js decode ${JSON.stringify(f)} | head -c 10`], { cwd: join(__dirname, '..', '..'), encoding: 'utf8' });
    expect({ status: p.status, stdout: p.stdout, stderr: p.stderr }).toEqual({ status: 0, stdout: 'word0 word', stderr: '' });
    const d = start(['decode', f]);
    await d.waitStdout((o) => o.length > 0);
    d.child.stdout!.destroy();
    const r = await d.done;
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  });

  it('stops reading at the completion: a connection left open after [DONE] ends the command', async () => {
    const w = writer(file(dir, 'open.sse', openaiCapture(DELTAS)), [], 0, -1, 30);
    const r = await run(['decode'], { stdin: w, timeoutMs: 8000 });
    w.kill();
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: TEXT, stderr: '' });
  });

  it('--lenient: U+FFFD instead of an error; --no-nfc: graphemes without NFC', async () => {
    const r = await run(['decode', '--lenient'], { input: Buffer.from([0x61, 0xff, 0x62]) });
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 0, stdout: 'a\ufffdb' });
    const n = await run(['decode', '--no-nfc'], { input: enc.encode('cafe\u0301') });
    expect(n.stdout).toBe('cafe\u0301');
  });
});

describe('decode: the whole message of a model stream', () => {
  // An agent's turn from Anthropic: thinking with its signature, a tool call in two fragments.
  const events: [string, unknown][] = [
    ['message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, usage: { input_tokens: 3, output_tokens: 1 } } }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Paris? ' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'c2ln' } }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Looking ☀' } }],
    ['content_block_stop', { type: 'content_block_stop', index: 1 }],
    ['content_block_start', { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_1', name: 'weather', input: {} } }],
    ['content_block_delta', { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"city":' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } }],
    ['content_block_stop', { type: 'content_block_stop', index: 2 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } }],
    ['message_stop', { type: 'message_stop' }],
  ];
  const bytes = enc.encode(events.map(([t, d]) => `event: ${t}\ndata: ${JSON.stringify(d)}\n\n`).join(''));
  const said = [
    { reasoning: 'Paris? ' },
    // (Anthropic's call has the `input` of its start, {}, until a fragment brings text)
    { toolCall: { index: 0, id: 'toolu_1', name: 'weather', arguments: '{}', done: false } },
    { toolCall: { index: 0, id: 'toolu_1', name: 'weather', arguments: '{"city":', replaces: true, done: false } },
    { toolCall: { index: 0, id: 'toolu_1', name: 'weather', arguments: '"Paris"}', done: false } },
    { toolCall: { index: 0, id: 'toolu_1', name: 'weather', arguments: '', done: true, valid: true } },
  ];

  it('--events: after each event its reasoning and the tool calls it begins, adds to or ends; the same at every cut', async () => {
    const f = file(dir, 'agent.sse', bytes);
    const lines = (stdout: string) => stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    const whole = await run(['decode', '--events', f]);
    expect(whole.code).toBe(0);
    const got = lines(whole.stdout);
    expect(got.filter((l) => !('type' in l))).toEqual(said);
    expect(got.filter((l) => 'type' in l).map((l) => l.type)).toEqual(events.map(([t]) => t));
    // each model line right after its event
    expect(got.findIndex((l) => 'reasoning' in l)).toBe(3);
    const cut = await run(['decode', '--events', '--format', 'anthropic'], { stdin: writer(f, awkwardCuts(bytes), 0) });
    expect(cut.stdout).toBe(whole.stdout);
  });

  it('--events: the media an event carries (not its data again) and the provider\'s own calls, their results once; the same at every cut', async () => {
    const code = { language: 'PYTHON', code: 'print(6*7)' };
    const outcome = { outcome: 'OUTCOME_OK', output: '42\n' };
    const chunks = [
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Here. ' }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }, { fileData: { mimeType: 'video/mp4', fileUri: 'gs://b/clip.mp4' } }] }, index: 0 }] },
      { candidates: [{ content: { role: 'model', parts: [{ executableCode: code }] }, index: 0 }] },
      { candidates: [{ content: { role: 'model', parts: [{ codeExecutionResult: outcome }] }, index: 0 }] },
      { candidates: [{ content: { role: 'model', parts: [{ text: 'It is 42.' }] }, finishReason: 'STOP', index: 0 }] },
    ];
    const g = enc.encode(chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join(''));
    const f = file(dir, 'gemini-media.sse', g);
    const whole = await run(['decode', '--events', '--format', 'gemini', f]);
    expect(whole.code).toBe(0);
    const got = whole.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    const call = { index: 0, id: '', name: 'code_execution' };
    expect(got.map((l) => ('data' in l ? 'event' : l))).toEqual([
      'event',
      { media: { mimeType: 'image/png', bytes: 12 } },
      { media: { mimeType: 'video/mp4', bytes: 15, uri: 'gs://b/clip.mp4' } },
      'event',
      { serverToolCall: { ...call, arguments: JSON.stringify(code), done: true, valid: true } },
      'event',
      { serverToolCall: { ...call, arguments: '', done: true, valid: true, result: JSON.stringify(outcome) } },
      'event',
    ]);
    const cut = await run(['decode', '--events', '--format', 'gemini'], { stdin: writer(f, awkwardCuts(g), 0) });
    expect(cut.stdout).toBe(whole.stdout);
  });

  it('--events and --parts: a result said again for the provider\'s call (it replaces the first) is printed too, of the same size or not', async () => {
    const ev = (type: string, d: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...d })}\n\n`;
    const result = (title: string) => ({ type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', title, url: 'https://example.com' }] });
    const g = enc.encode([
      ev('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], usage: { input_tokens: 1, output_tokens: 1 } } }),
      ev('content_block_start', { index: 0, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' } } }),
      ev('content_block_stop', { index: 0 }),
      ev('content_block_start', { index: 1, content_block: result('First') }),
      ev('content_block_stop', { index: 1 }),
      ev('content_block_start', { index: 2, content_block: result('Other') }),
      ev('content_block_stop', { index: 2 }),
      ev('content_block_start', { index: 3, content_block: { type: 'text', text: '' } }),
      ev('content_block_delta', { index: 3, delta: { type: 'text_delta', text: 'Done.' } }),
      ev('content_block_stop', { index: 3 }),
      ev('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }),
      ev('message_stop', {}),
    ].join(''));
    const f = file(dir, 'anthropic-result-again.sse', g);
    const e = await run(['decode', '--events', '--format', 'anthropic', f]);
    expect(e.code).toBe(0);
    const results = e.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { serverToolCall?: { result?: string } }).filter((l) => l.serverToolCall?.result !== undefined).map((l) => l.serverToolCall!.result);
    expect(results).toEqual([JSON.stringify(result('First')), JSON.stringify(result('Other'))]);
    const p = await run(['decode', '--parts', '--format', 'anthropic', f]);
    expect({ code: p.code, stdout: p.stdout }).toEqual({ code: 0, stdout: 'Done.' });
    const size = Buffer.byteLength(JSON.stringify(result('First')));
    expect(p.stderr.split('\n').filter((l) => l.startsWith('[provider')).join('\n')).toBe([
      '[provider\'s tool call 0] web_search (srvtoolu_1) {"query":"q"}',
      `[provider's tool result 0] web_search (srvtoolu_1), ${size} bytes of JSON`,
      `[provider's tool result 0] web_search (srvtoolu_1), ${size} bytes of JSON`,
    ].join('\n'));
  });

  it('--parts: the text alone on standard output; the reasoning, each call as it ends and each source on standard error; the same at every cut', async () => {
    const f = file(dir, 'agent3.sse', bytes);
    const whole = await run(['decode', '--parts', f]);
    expect([whole.code, whole.stdout, whole.stderr]).toEqual([0, 'Looking ☀', '[reasoning]\nParis? \n[tool call 0] weather (toolu_1) {"city":"Paris"}\n']);
    const cut = await run(['decode', '--parts', '--format', 'anthropic'], { stdin: writer(f, awkwardCuts(bytes), 0) });
    expect([cut.code, cut.stdout, cut.stderr]).toEqual([whole.code, whole.stdout, whole.stderr]);
    // a second block of reasoning after a call, a cited source, a call whose arguments are not JSON, a stream cut short
    const more: [string, unknown][] = [
      ...events.slice(0, 12),
      ['content_block_start', { type: 'content_block_start', index: 3, content_block: { type: 'thinking', thinking: '' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 3, delta: { type: 'thinking_delta', thinking: 'Sunny.\n' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 3 }],
      ['content_block_start', { type: 'content_block_start', index: 4, content_block: { type: 'text', text: '' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 4, delta: { type: 'citations_delta', citation: { type: 'web_search_result_location', url: 'https://met.no/oslo', title: 'Oslo', cited_text: 'Sun all day', encrypted_index: 'x' } } }],
      ['content_block_delta', { type: 'content_block_delta', index: 4, delta: { type: 'text_delta', text: ' It is sunny.' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 4 }],
      ['content_block_start', { type: 'content_block_start', index: 5, content_block: { type: 'tool_use', id: 'toolu_2', name: 'log', input: {} } }],
      ['content_block_delta', { type: 'content_block_delta', index: 5, delta: { type: 'input_json_delta', partial_json: '{"a":' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 5 }],
    ];
    const g = file(dir, 'agent4.sse', enc.encode(more.map(([t, d]) => `event: ${t}\ndata: ${JSON.stringify(d)}\n\n`).join('')));
    const r = await run(['decode', '--parts', g]);
    expect([r.code, r.stdout]).toEqual([3, 'Looking ☀ It is sunny.']);
    expect(r.stderr.split('seam-stream:')[0]).toBe([
      '[reasoning]', 'Paris? ', '[tool call 0] weather (toolu_1) {"city":"Paris"}', '[reasoning]', 'Sunny.',
      '[source] Oslo <https://met.no/oslo> "Sun all day"',
      '[tool call 1] log (toolu_2) {"a": (arguments that are not one JSON value)', '',
    ].join('\n'));
    expect(r.stderr).toMatch(/seam-stream: .*message_stop/);
  });

  it('--parts: with --events, with a format that has no parts, with --status on: a usage error; a format found in the input that has none, said', async () => {
    const f = file(dir, 'agent5.sse', bytes);
    for (const [args, said] of [
      [['--events'], /--events prints what each event says/],
      [['--format', 'sse'], /--parts needs a model format: sse/],
      [['--status', 'on'], /where the status line \(--status on\) would write over it/],
    ] as const) {
      const r = await run(['decode', '--parts', ...args, f]);
      expect([r.code, r.stdout], args.join(' ')).toEqual([1, '']);
      expect(r.stderr, args.join(' ')).toMatch(said);
    }
    // a format found in the input that has no parts: said, and its text printed
    const sse = await run(['decode', '--parts', file(dir, 'plain.sse', 'data: one\n\ndata: two\n\n')]);
    expect([sse.code, sse.stdout, sse.stderr]).toEqual([0, 'one\ntwo\n', 'seam-stream: --parts: the input looks like sse, which has no reasoning, tool calls or sources: its text only\n']);
  });

  it('--report: the reasoning\'s size and each tool call, in words and as JSON', async () => {
    const f = file(dir, 'agent2.sse', bytes);
    const r = await run(['decode', '--report', '--json', f]);
    expect(r.stdout).toBe('Looking ☀');
    const report = JSON.parse(r.stderr.trim().split('\n').at(-1)!);
    expect(report).toMatchObject({ status: 'done', finishReason: 'tool_use', reasoningBytes: 7, toolCalls: [{ index: 0, id: 'toolu_1', name: 'weather', arguments: '{"city":"Paris"}', done: true, valid: true }] });
    const h = await run(['decode', '--report', f]);
    expect(h.stderr).toContain('  reasoning     7 UTF-8 bytes\n  tool calls    0: weather (toolu_1) {"city":"Paris"} (valid JSON)\n');
  });
});
