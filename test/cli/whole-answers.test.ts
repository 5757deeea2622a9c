// The command on a whole answer (a JSON body asked without streaming, as `curl` without
// `"stream": true` saves it): decode finds its format from the body, on one line or pretty-printed,
// and prints its text; check reads it as its stream, clean; the report counts the events it is read as.
import { beforeAll, describe, expect, it } from 'vitest';
import { file, run, start, tempDir, writer } from './helpers.js';

let dir: string;
beforeAll(() => {
  dir = tempDir();
});

const answers: [string, unknown, string][] = [
  ['openai', { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: 'Bonjour, e\u0301te\u0301 ☀️' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 } }, 'stop'],
  ['anthropic', { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', content: [{ type: 'thinking', thinking: 'hm', signature: 's' }, { type: 'text', text: 'Bonjour, e\u0301te\u0301 ☀️' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 3, output_tokens: 5 } }, 'end_turn'],
  ['openai-responses', { id: 'resp_1', object: 'response', status: 'completed', model: 'gpt-5', output: [{ id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Bonjour, e\u0301te\u0301 ☀️', annotations: [] }] }], usage: { input_tokens: 3, output_tokens: 5 } }, 'completed'],
  ['gemini', { candidates: [{ content: { parts: [{ text: 'Bonjour, e\u0301te\u0301 ☀️' }], role: 'model' }, finishReason: 'STOP', index: 0 }] }, 'STOP'],
  // (Bedrock's Converse, its members in the order AWS sends them)
  ['bedrock', { metrics: { latencyMs: 412 }, output: { message: { role: 'assistant', content: [{ text: 'Bonjour, e\u0301te\u0301 ☀️' }] } }, stopReason: 'end_turn', usage: { inputTokens: 3, outputTokens: 5, totalTokens: 8 } }, 'end_turn'],
  // (and in another order, as a tool that rewrites it may write them)
  ['bedrock', { stopReason: 'end_turn', usage: { inputTokens: 3, outputTokens: 5, totalTokens: 8 }, output: { message: { role: 'assistant', content: [{ text: 'Bonjour, e\u0301te\u0301 ☀️' }] } } }, 'end_turn'],
];

describe('a whole answer: decode prints its text (NFC), check finds it clean', () => {
  for (const [n, [format, body, finish]] of answers.entries()) {
    for (const [layout, text] of [['one line', JSON.stringify(body)], ['pretty', `${JSON.stringify(body, null, 2)}\n`]] as const) {
      it(`${format} (${n}), ${layout}`, async () => {
        const path = file(dir, `${format}-${n}-${layout.replace(' ', '-')}.json`, text);
        for (const args of [['decode', path], ['decode', '--format', format, path]]) {
          expect(await run(args)).toMatchObject({ code: 0, stdout: 'Bonjour, été ☀️', stderr: '' });
        }
        const r = await run(['decode', '--report', '--json', path]);
        const report = JSON.parse(r.stderr.slice(r.stderr.indexOf('{')));
        expect([report.format, report.sniffed, report.status, report.finishReason, report.graphemes]).toEqual([format, true, 'done', finish, 14]);
        const c = await run(['check', path]);
        expect([c.code, c.stdout.split('\n')[1]]).toEqual([0, 'clean']);
        expect(c.stdout.split('\n')[0]).toContain(`: ${format} (sniffed), ${Buffer.byteLength(text)} bytes`);
      });
    }
  }
});

describe('a failed Responses response (its error beside its output) is checked as its stream', () => {
  it('check: the provider\'s error among its events, and no completion; decode: its output, then the error', async () => {
    const body = JSON.stringify({
      id: 'resp_3', object: 'response', created_at: 1, status: 'failed', model: 'gpt-5', error: { code: 'server_error', message: 'The model failed to finish.' },
      output: [{ id: 'msg_1', type: 'message', role: 'assistant', status: 'incomplete', content: [{ type: 'output_text', text: 'Half an', annotations: [] }] }], usage: null,
    });
    const path = file(dir, 'responses-failed.json', body);
    const c = await run(['check', path]);
    expect(c.code).toBe(5);
    expect(c.stdout.split('\n').slice(1, 4)).toEqual([
      '2 problems:',
      '  byte   0  the provider sent an error: The model failed to finish. (server_error)',
      `  byte ${Buffer.byteLength(body)}  the answer ends without its completion (a response.completed event)`,
    ]);
    expect(c.stdout.split('\n')[0]).toContain(`: openai-responses (sniffed), ${Buffer.byteLength(body)} bytes, 0 lines, 5 events`);
    const d = await run(['decode', path]);
    expect([d.code, d.stdout]).toEqual([5, 'Half an']);
  });
});

it('a whole answer whose events would be far larger than it (a long model said in each of 1,500 choices\' chunks): decode and check stop at the body (exit 4), where check wrote them all and ran out of memory', async () => {
  const body = JSON.stringify({ id: 'c', object: 'chat.completion', model: 'x'.repeat(20_000), choices: Array.from({ length: 1500 }, (_, index) => ({ index, message: {} })) });
  const path = file(dir, 'amplified.json', body);
  const most = 4 * 65536 + 1024 * 1024;
  const d = await run(['decode', '--format', 'openai', '--max-event-bytes', '65536', path]);
  expect([d.code, d.stdout, d.stderr]).toEqual([4, '', `seam-stream: The openai response, a whole answer of ${body.length} bytes, would be read as events of more than ${most} bytes (4 × maxEventBytes and 1 MiB): not read (raise it with --max-event-bytes)\n`]);
  const c = await run(['check', '--format', 'openai', '--max-event-bytes', '65536', path]);
  expect(c.code).toBe(4);
  expect(c.stdout).toContain(`byte 0  the whole answer would be read as events of more than ${most} bytes (4 × --max-event-bytes and 1 MiB): decode stops there\n`);
});

describe('Bedrock\'s whole answers: decode and check read them as their streams', () => {
  const converse = JSON.stringify({
    metrics: { latencyMs: 412 },
    output: { message: { role: 'assistant', content: [
      { reasoningContent: { reasoningText: { text: 'Erst denken.', signature: 'EqoB' } } }, { reasoningContent: { redactedContent: 'UmVk' } },
      { text: 'Grüße 👋' }, { toolUse: { toolUseId: 'tooluse_1', name: 'list_alerts', input: {} } }, { toolUse: { toolUseId: 'tooluse_2', name: 'get_weather', input: { city: 'Zürich' } } },
    ] } },
    stopReason: 'tool_use', usage: { inputTokens: 30, outputTokens: 12, totalTokens: 42 },
  });

  it('Converse: the text, the reasoning, the calls, the finish and the usage; check clean', async () => {
    const path = file(dir, 'converse.json', converse);
    for (const args of [['decode', path], ['decode', '--format', 'bedrock', path]]) expect(await run(args)).toMatchObject({ code: 0, stdout: 'Grüße 👋', stderr: '' });
    const r = await run(['decode', '--format', 'bedrock', '--report', '--json', path]);
    const report = JSON.parse(r.stderr.slice(r.stderr.indexOf('{')));
    expect([report.status, report.finishReason, report.usage, report.graphemes]).toEqual(['done', 'tool_use', { inputTokens: 30, outputTokens: 12, totalTokens: 42 }, 7]);
    // (the parts, on stderr: the reasoning, then each call as it ended)
    const p = await run(['decode', '--format', 'bedrock', '--parts', path]);
    expect([p.code, p.stdout, p.stderr]).toEqual([0, 'Grüße 👋', '[reasoning]\nErst denken.\n[tool call 0] list_alerts (tooluse_1) {}\n[tool call 1] get_weather (tooluse_2) {"city":"Zürich"}\n']);
    for (const args of [['check', path], ['check', '--format', 'bedrock', path]]) {
      const c = await run(args);
      expect([c.code, c.stdout.split('\n')[1]]).toEqual([0, 'clean']);
      expect(c.stdout.split('\n')[0]).toContain(`: bedrock${args.length === 2 ? ' (sniffed)' : ''}, ${Buffer.byteLength(converse)} bytes, 0 lines, 16 events, 0 heartbeats, 7 graphemes of text, 2 tool calls, completed (finish reason "tool_use")`);
    }
  });

  it('InvokeModel of a Claude model (bedrock-invoke): Anthropic\'s message', async () => {
    const body = JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', content: [{ type: 'text', text: 'Grüße 👋' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 3, output_tokens: 5 } });
    const path = file(dir, 'invoke.json', body);
    expect(await run(['decode', '--format', 'bedrock-invoke', path])).toMatchObject({ code: 0, stdout: 'Grüße 👋', stderr: '' });
    const c = await run(['check', '--format', 'bedrock-invoke', path]);
    expect([c.code, c.stdout.split('\n')[1]]).toEqual([0, 'clean']);
  });

  it('a Converse body that is not UTF-8: check finds it where decode stops (exit 2), after the white space before it', async () => {
    const body = Buffer.concat([Buffer.from('  \n{"output":{"message":{"role":"assistant","content":[{"text":"G'), Buffer.from([0xff]), Buffer.from('ut"}]}},"stopReason":"end_turn"}')]);
    const at = body.indexOf(0xff);
    const path = file(dir, 'converse-not-utf8.json', body);
    const d = await run(['decode', '--format', 'bedrock', path]);
    expect([d.code, d.stderr]).toEqual([2, `seam-stream: The bedrock response, a whole answer in a JSON body, is not valid UTF-8 at byte offset ${at} (--lenient reads it as U+FFFD and goes on)\n`]);
    const c = await run(['check', '--format', 'bedrock', path]);
    expect([c.code, c.stdout.split('\n').slice(1, 3)]).toEqual([2, ['1 problem:', `  byte ${at}  invalid UTF-8 at byte ${at}`]]);
  });

  it('an error body: the provider\'s error (exit 5); a body that is not JSON: exit 6, at its start', async () => {
    const err = file(dir, 'bedrock-error.json', '{"message":"Malformed input request","__type":"ValidationException"}');
    const d = await run(['decode', '--format', 'bedrock', err]);
    expect([d.code, d.stdout, d.stderr]).toEqual([5, '', 'seam-stream: The provider answered with an error body: Malformed input request (ValidationException)\n']);
    const c = await run(['check', '--format', 'bedrock', err]);
    expect([c.code, c.stdout.split('\n').slice(1, 3)]).toEqual([5, ['1 problem:', '  byte 0  the provider answered with an error body: Malformed input request (ValidationException)']]);
    const bad = file(dir, 'bedrock-bad.json', '  {"output": {"message": {"content": [');
    const b = await run(['decode', '--format', 'bedrock', bad]);
    expect([b.code, b.stderr]).toEqual([6, 'seam-stream: The bedrock response, from byte offset 2, is neither an event stream nor valid JSON\n']);
  });
});

describe('a whole answer nested deeper than 512 levels', () => {
  it('decode and check stop at the bracket past them (exit 6), where check said an internal error', async () => {
    const head = '{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"t","name":"f","input":';
    const body = `${head}${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}`;
    const at = head.length + 5 * (512 - 3); // (three brackets are open before the input's)
    const path = file(dir, 'deep.json', body);
    const d = await run(['decode', path]);
    expect([d.code, d.stdout, d.stderr]).toEqual([6, '', `seam-stream: The anthropic response, a whole answer in a JSON body, is nested deeper than 512 levels (at byte offset ${at})\n`]);
    const c = await run(['check', '--json', path]);
    expect(c.code).toBe(6);
    expect(JSON.parse(c.stdout).problems).toEqual([{ kind: 'json', offset: at, message: 'the input is a JSON body nested deeper than 512 levels' }]);
  });
});

describe('decode --events on a whole answer: the events it is read as, each in its format\'s frame shape', () => {
  // (a JSON body in place of the stream printed nothing, exit 0, and a Converse body failed at a
  // prelude CRC, exit 6, where decode without --events read it)
  const message = {
    id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', content: [{ type: 'text', text: 'Grüße' }, { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } }],
    stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 3, output_tokens: 5 },
  };
  const events: [string, unknown][] = [
    ['message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 3, output_tokens: 5 } } }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Grüße' } }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'weather', input: {} } }],
    ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":"Paris"}' } }],
    ['content_block_stop', { type: 'content_block_stop', index: 1 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { input_tokens: 3, output_tokens: 5 } }],
    ['message_stop', { type: 'message_stop' }],
  ];
  const calls: Record<number, object> = {
    4: { index: 0, id: 'toolu_1', name: 'weather', arguments: '{}', done: false },
    5: { index: 0, id: 'toolu_1', name: 'weather', arguments: '{"city":"Paris"}', replaces: true, done: false },
    6: { index: 0, id: 'toolu_1', name: 'weather', arguments: '', done: true, valid: true },
  };
  const printed = (frame: (type: string, data: string) => object) => events.map(([type, e], i) => `${JSON.stringify(frame(type, JSON.stringify(e)))}\n${calls[i] ? `${JSON.stringify({ toolCall: calls[i] })}\n` : ''}`).join('');

  it('Anthropic\'s message, after a BOM and white space, whole and a byte a read: its SSE events, with the call', async () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(` \r\n${JSON.stringify(message, null, 2)}\n`)]);
    const path = file(dir, 'events-anthropic.json', body);
    const want = printed((type, data) => ({ type, data, id: '' }));
    expect(await run(['decode', '--events', path])).toMatchObject({ code: 0, stdout: want, stderr: '' });
    const w = writer(path, Array.from({ length: body.length }, (_, i) => i), 0);
    expect(await start(['decode', '--events', '--format', 'anthropic', '-'], { stdin: w }).done).toMatchObject({ code: 0, stdout: want, stderr: '' });
  });

  it('Claude\'s answer on InvokeModel (bedrock-invoke) and a Converse answer (bedrock): messages at the body, with no headers', async () => {
    const path = file(dir, 'events-invoke.json', `\n${JSON.stringify(message)}`);
    expect(await run(['decode', '--events', '--format', 'bedrock-invoke', path])).toMatchObject({ code: 0, stdout: printed((_, data) => ({ offset: 1, headers: {}, data })), stderr: '' });
    const converse = { output: { message: { role: 'assistant', content: [{ text: 'Hallo' }] } }, stopReason: 'end_turn', usage: { inputTokens: 3, outputTokens: 5, totalTokens: 8 } };
    const c = file(dir, 'events-converse.json', JSON.stringify(converse));
    const frames = [
      { messageStart: { role: 'assistant' } }, { contentBlockDelta: { contentBlockIndex: 0, delta: { text: 'Hallo' } } }, { contentBlockStop: { contentBlockIndex: 0 } },
      { messageStop: { stopReason: 'end_turn' } }, { metadata: { usage: { inputTokens: 3, outputTokens: 5, totalTokens: 8 } } },
    ].map((d) => `${JSON.stringify({ offset: 0, headers: {}, data: JSON.stringify(d) })}\n`).join('');
    for (const args of [['decode', '--events', c], ['decode', '--events', '--format', 'bedrock', c]]) expect(await run(args)).toMatchObject({ code: 0, stdout: frames, stderr: '' });
  });

  it('white space alone: no frame, and the stream\'s end, as without --events (Bedrock\'s framing said a message was cut)', async () => {
    const w = file(dir, 'events-white.txt', '  \n\n  ');
    for (const [format, completion] of [['bedrock', 'a messageStop event'], ['anthropic', 'a message_stop event']]) {
      const said = `seam-stream: The stream ended without its completion (${completion}) after 6 bytes: the text is incomplete\n`;
      for (const args of [['decode', '--format', format, w], ['decode', '--events', '--format', format, w]]) expect(await run(args)).toMatchObject({ code: 3, stdout: '', stderr: said });
    }
  });

  it('an error body or a body that is not JSON prints no event: the stream\'s error says it', async () => {
    const e = file(dir, 'events-error.json', '{"error":{"message":"Invalid key","type":"invalid_request_error","code":"invalid_api_key"}}\n');
    expect(await run(['decode', '--events', e])).toMatchObject({ code: 5, stdout: '', stderr: 'seam-stream: The provider answered with an error body: Invalid key (invalid_api_key)\n' });
    const cut = file(dir, 'events-cut.json', JSON.stringify(message).slice(0, 80));
    expect(await run(['decode', '--events', '--format', 'anthropic', cut])).toMatchObject({ code: 6, stdout: '', stderr: 'seam-stream: The anthropic response, from byte offset 0, is neither an event stream nor valid JSON\n' });
  });
});
