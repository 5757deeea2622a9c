// Responses' items of the tools the API defines and the client runs: `computer_call`,
// `local_shell_call`, `shell_call` in the local environment (its commands streamed by
// `response.shell_call_command.*` events), `apply_patch_call`, `tool_search_call` run by the
// client, and an MCP server's `mcp_approval_request`. An agent must act on each before the turn
// goes on, so they are the client's calls, not the provider's: ModelStream has them with their item
// type, their tool's name and the item's members but its envelope, as sent, as the arguments, said
// whole by the item's end (which says who runs it); a relay writes them as calls with those
// arguments, and finishes `tool_calls`/`tool_use`.
// The same items run by the provider (a shell call in a container, a tool search the server ran)
// and the hosted tools' items stay the provider's. Whole, at every cut and dripped; read by the
// official clients.
import { describe, expect, it } from 'vitest';
import { ModelEventReader, ModelStream, ModelStreamError, SseRelay, type ToolCall } from '../../bindings/index.js';
import { standardChunkings } from '../helpers/random.js';
import { anthropicFinal, callsRead, sameAtEveryCut } from '../helpers/sdk-clients.js';
import { thrown } from '../helpers/thrown.js';

const enc = new TextEncoder();
const rs = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
const created = rs({ type: 'response.created', sequence_number: 0, response: { id: 'resp_1', status: 'in_progress', output: [] } });
const completed = rs({ type: 'response.completed', sequence_number: 99, response: { id: 'resp_1', status: 'completed', output: [], usage: { input_tokens: 10, output_tokens: 5 } } });
/** An item added (in progress, as `begin`) and done (as `end`), with what streams between. */
const item = (at: number, begin: Record<string, unknown>, end: Record<string, unknown>, between = '') =>
  rs({ type: 'response.output_item.added', output_index: at, item: { ...begin, status: 'in_progress' } }) + between
  + rs({ type: 'response.output_item.done', output_index: at, item: { ...end, status: 'completed' } });

const CLICK = { type: 'click', button: 'left', x: 156, y: 50 };
const computer = { id: 'cu_1', type: 'computer_call', call_id: 'call_cu1', action: CLICK, pending_safety_checks: [{ id: 'sc_1', code: 'malicious_instructions', message: 'Check "this" é' }] };
const COMMANDS = ['ls -la "a b"', 'grep -n é src/*.ts | head'];
const shellAction = { commands: COMMANDS, timeout_ms: 120000, max_output_length: null };
const shellBegin = { id: 'sh_1', type: 'shell_call', call_id: 'call_sh1', action: { ...shellAction, commands: [] }, environment: { type: 'local' }, created_by: 'resp_1' };
const shellEnd = { ...shellBegin, action: shellAction };
const shellCommands = COMMANDS.map((c, i) => rs({ type: 'response.shell_call_command.added', output_index: 1, command_index: i, command: '' })
  + rs({ type: 'response.shell_call_command.delta', output_index: 1, command_index: i, delta: c.slice(0, 5) })
  + rs({ type: 'response.shell_call_command.delta', output_index: 1, command_index: i, delta: c.slice(5) })
  + rs({ type: 'response.shell_call_command.done', output_index: 1, command_index: i, command: c })).join('');
const OPERATION = { type: 'update_file', path: 'src/a "b".ts', diff: '@@\n-const x = \'\\\\\';\n+const x = "é"; // 🚀\n' };
const patch = { id: 'apc_1', type: 'apply_patch_call', call_id: 'call_ap1', operation: OPERATION, caller: { type: 'direct' } };
const localShell = { id: 'ls_1', type: 'local_shell_call', call_id: 'call_ls1', action: { type: 'exec', command: ['ls', '-la'], env: { LANG: 'C' }, timeout_ms: null, user: null, working_directory: '/tmp' } };
const approval = { id: 'mcpr_1', type: 'mcp_approval_request', server_label: 'deepwiki', name: 'ask_question', arguments: '{"repoName":"a/b","question":"é?"}' };
const search = { id: 'ts_1', type: 'tool_search_call', call_id: 'call_ts1', execution: 'client', arguments: { query: 'weather' } };

/** The call ModelStream has for an item: its call id (an approval request's item id), its tool's name, the item without its envelope. */
const call = (index: number, o: Record<string, unknown>, name: string): ToolCall => {
  const { type, id, call_id: callId, status: _s, created_by: _c, ...args } = o;
  return { index, id: (callId ?? id) as string, name, arguments: JSON.stringify(args), done: true, valid: true, type: type as ToolCall['type'] };
};

const everyItem = created
  + rs({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Looking.' })
  + item(1, shellBegin, shellEnd, shellCommands)
  + item(2, computer, computer)
  + item(3, patch, patch)
  + item(4, localShell, localShell)
  + item(5, approval, approval)
  + item(6, search, search)
  + item(7, { id: 'fc_1', type: 'function_call', call_id: 'call_f1', name: 'lint', arguments: '' }, { id: 'fc_1', type: 'function_call', call_id: 'call_f1', name: 'lint', arguments: '{"fix":true}' },
    rs({ type: 'response.function_call_arguments.delta', output_index: 7, delta: '{"fix":true}' }))
  + completed;
const EVERY: ToolCall[] = [
  call(0, shellEnd, 'shell'), call(1, computer, 'computer'), call(2, patch, 'apply_patch'), call(3, localShell, 'local_shell'),
  call(4, approval, 'ask_question'), call(5, search, 'tool_search'),
  { index: 6, id: 'call_f1', name: 'lint', arguments: '{"fix":true}', done: true, valid: true },
];

/** The same tools run by the provider, and a hosted tool's item: the provider's calls, and the turn ends. */
const hosted = created
  + item(0, { ...shellBegin, environment: { type: 'container_reference', container_id: 'cntr_1' } }, { ...shellEnd, environment: { type: 'container_reference', container_id: 'cntr_1' } })
  + item(1, { id: 'sho_1', type: 'shell_call_output', call_id: 'call_sh1', output: [] }, { id: 'sho_1', type: 'shell_call_output', call_id: 'call_sh1', output: [{ stdout: 'a\n', stderr: '', outcome: { type: 'exit', exit_code: 0 } }] })
  + item(2, { ...search, execution: 'server' }, { ...search, execution: 'server' })
  + item(3, { id: 'ws_1', type: 'web_search_call', action: { type: 'search', query: 'x' } }, { id: 'ws_1', type: 'web_search_call', action: { type: 'search', query: 'x' } })
  + rs({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 4, content_index: 0, delta: 'Done.' })
  + completed;

describe("the client's calls of the API's own tools (Responses)", () => {
  const body = enc.encode(everyItem);
  for (const raw of [false, true]) {
    it(`every kind${raw ? ', raw' : ''}: ModelStream has each as the client's call, with its item type, whatever the reads`, () => {
      for (const chunks of standardChunkings(body)) {
        const m = new ModelStream({ format: 'openai-responses', raw });
        let got = '';
        for (const c of chunks) got += m.push(c);
        got += m.flush();
        expect(got).toBe('Looking.');
        expect(m.toolCalls).toEqual(EVERY);
        expect(m.serverToolCalls).toEqual([]);
        expect(m.finish().toolCalls).toEqual(EVERY);
      }
    });
  }

  it('the arguments are the item without its envelope: the action, the operation, the safety checks', () => {
    const m = new ModelStream({ format: 'openai-responses' });
    m.push(body);
    m.flush();
    const [shell, cu, ap, ls, mcp, ts] = m.toolCalls.map((c) => JSON.parse(c.arguments) as Record<string, unknown>);
    expect(shell).toEqual({ action: shellAction, environment: { type: 'local' } });
    expect(cu).toEqual({ action: CLICK, pending_safety_checks: computer.pending_safety_checks });
    expect(ap).toEqual({ operation: OPERATION, caller: { type: 'direct' } });
    expect(ls).toEqual({ action: localShell.action });
    expect(mcp).toEqual({ server_label: 'deepwiki', name: 'ask_question', arguments: approval.arguments });
    expect(ts).toEqual({ execution: 'client', arguments: { query: 'weather' } });
  });

  it('the call begins at its item\'s end, whole: none while the item streams; a stream cut before its end is truncated with none', () => {
    const upTo = everyItem.indexOf('event: response.output_item.done');
    const m = new ModelStream({ format: 'openai-responses' });
    m.push(enc.encode(everyItem.slice(0, upTo)));
    expect(m.toolCalls).toEqual([]);
    expect(m.serverToolCalls).toEqual([]);
    expect(() => m.flush()).toThrow(expect.objectContaining({ code: 'ERR_STREAM_TRUNCATED' }));
    expect(m.toolCalls).toEqual([]);
  });

  it('the item\'s end says who runs it, whatever its start said', () => {
    const container = { type: 'container_reference', container_id: 'cntr_1' };
    const cases = [
      { begin: { ...shellBegin, environment: container }, end: shellEnd, client: true },
      { begin: { ...shellBegin, environment: null }, end: { ...shellEnd, environment: container }, client: false },
      { begin: { ...search, execution: undefined }, end: search, client: true },
    ];
    for (const { begin, end, client } of cases) {
      const m = new ModelStream({ format: 'openai-responses' });
      m.push(enc.encode(created + item(0, begin, end) + completed));
      m.flush();
      expect(m.toolCalls.map((c) => [c.id, c.name, c.type, c.done, c.valid])).toEqual(client ? [[end.call_id, end.type === 'shell_call' ? 'shell' : 'tool_search', end.type, true, true]] : []);
      expect(m.serverToolCalls.map((c) => [c.id, c.name, c.done])).toEqual(client ? [] : [[end.id, end.type, true]]);
    }
  });

  it('the arguments are the item\'s members as sent: numbers, escapes and spaces as they came, a key said twice twice', () => {
    const raw = '{"id":"cu_9","type":"computer_call","status":"completed","call_id":"call_9", "action" : {"type":"wait","ms":1.50,"big":12345678901234567891,"s":"\\u00e9\\"","e":-0} ,"pending_safety_checks":[],"action":{"type":"screenshot"}}';
    const body = created + `event: response.output_item.done\ndata: {"type":"response.output_item.done","output_index":0,"item":${raw}}\n\n` + completed;
    const want = '{"action" : {"type":"wait","ms":1.50,"big":12345678901234567891,"s":"\\u00e9\\"","e":-0},"pending_safety_checks":[],"action":{"type":"screenshot"}}';
    for (const chunks of standardChunkings(enc.encode(body))) {
      const m = new ModelStream({ format: 'openai-responses' });
      for (const c of chunks) m.push(c);
      m.flush();
      expect(m.toolCalls).toEqual([{ index: 0, id: 'call_9', name: 'computer', arguments: want, done: true, valid: true, type: 'computer_call' }]);
    }
  });

  it('relayed to Anthropic with text between the item\'s start and end: one tool_use block, named, after the text', async () => {
    const body = enc.encode(created + rs({ type: 'response.output_item.added', output_index: 0, item: { ...approval, status: 'in_progress' } })
      + rs({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'Asking.' })
      + rs({ type: 'response.output_item.done', output_index: 0, item: { ...approval, status: 'completed' } }) + completed);
    const got = await sameAtEveryCut(body, () => new SseRelay({ from: 'openai-responses', to: 'anthropic' }), async (b) => (await anthropicFinal(b)).content);
    const { type: _t, id: _i, ...input } = approval;
    expect(got).toEqual([{ type: 'text', text: 'Asking.' }, { type: 'tool_use', id: 'mcpr_1', name: 'ask_question', input }]);
  });

  it('the same tools run by the provider, and hosted tools: its own calls, and the turn ends', async () => {
    const b = enc.encode(hosted);
    for (const chunks of standardChunkings(b)) {
      const m = new ModelStream({ format: 'openai-responses' });
      let got = '';
      for (const c of chunks) got += m.push(c);
      got += m.flush();
      expect(got).toBe('Done.');
      expect(m.toolCalls).toEqual([]);
      expect(m.serverToolCalls.map((c) => [c.id, c.name, c.done])).toEqual([
        ['sh_1', 'shell_call', true], ['sho_1', 'shell_call_output', true], ['ts_1', 'tool_search_call', true], ['ws_1', 'web_search_call', true],
      ]);
    }
    const first = await sameAtEveryCut(b, () => new SseRelay({ from: 'openai-responses', to: 'openai' }), (x) => callsRead('openai', x));
    expect(first).toEqual({ text: 'Done.', calls: [], finish: 'stop' });
  });

  it('a hosted tool\'s call has the item\'s members but its envelope as its arguments, as sent, at its end: the search, the code run and its outputs, the MCP call and its output; a generated image\'s result is media', () => {
    const items = [
      [{ id: 'ws_9', type: 'web_search_call' }, { id: 'ws_9', type: 'web_search_call', action: { type: 'search', query: 'café "paris"', sources: [{ type: 'url', url: 'https://x.test/é' }] } }],
      [{ id: 'ci_9', type: 'code_interpreter_call', container_id: 'cntr_9', code: '' }, { id: 'ci_9', type: 'code_interpreter_call', container_id: 'cntr_9', code: 'print(1 + 1)', outputs: [{ type: 'logs', logs: '2\n' }] }],
      [{ id: 'mcp_9', type: 'mcp_call', server_label: 'docs', name: 'ask', arguments: '' }, { id: 'mcp_9', type: 'mcp_call', server_label: 'docs', name: 'ask', arguments: '{"q":"é"}', output: 'yes', error: null }],
      [{ id: 'ig_9', type: 'image_generation_call' }, { id: 'ig_9', type: 'image_generation_call', revised_prompt: 'a cat', result: 'iVBORw0KGgo=', output_format: 'png' }],
    ] as const;
    const b = enc.encode(created + items.map(([begin, end], i) => item(i, begin, end)).join('') + completed);
    const want = [
      { index: 0, id: 'ws_9', name: 'web_search_call', arguments: '{"action":{"type":"search","query":"café \\"paris\\"","sources":[{"type":"url","url":"https://x.test/é"}]}}', done: true, valid: true },
      { index: 1, id: 'ci_9', name: 'code_interpreter_call', arguments: '{"container_id":"cntr_9","code":"print(1 + 1)","outputs":[{"type":"logs","logs":"2\\n"}]}', done: true, valid: true },
      { index: 2, id: 'mcp_9', name: 'mcp_call', arguments: '{"server_label":"docs","name":"ask","arguments":"{\\"q\\":\\"é\\"}","output":"yes","error":null}', done: true, valid: true },
      { index: 3, id: 'ig_9', name: 'image_generation_call', arguments: '{"revised_prompt":"a cat","output_format":"png"}', done: true, valid: true },
    ];
    for (const chunks of standardChunkings(b)) {
      const m = new ModelStream({ format: 'openai-responses' });
      for (const c of chunks) m.push(c);
      m.flush();
      expect(m.serverToolCalls).toEqual(want);
      expect(m.toolCalls).toEqual([]);
      // (the image is media, its type from its output_format)
      expect(m.media).toEqual([{ mimeType: 'image/png', data: 'iVBORw0KGgo=', bytes: 12 }]);
    }
    for (const w of want) expect(JSON.parse(w.arguments)).toBeTypeOf('object');
    // past maxMediaBytes the image is kept without its data, and the stream goes on
    const small = new ModelStream({ format: 'openai-responses', maxMediaBytes: 8 });
    small.push(b);
    small.flush();
    expect([small.status, small.media]).toEqual(['done', [{ mimeType: 'image/png', data: '', bytes: 12, omitted: true }]]);
  });

  for (const to of ['openai', 'anthropic'] as const) {
    it(`relayed to ${to}: the official client has every call, and the turn waits for them, at every cut`, async () => {
      const first = await sameAtEveryCut(body, () => new SseRelay({ from: 'openai-responses', to }), (b) => callsRead(to, b));
      const want = EVERY.map((c) => (to === 'openai'
        ? { id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }
        : { id: c.id, name: c.name, input: JSON.parse(c.arguments) as unknown }));
      expect(first).toEqual({ text: 'Looking.', calls: want, finish: to === 'openai' ? 'tool_calls' : 'tool_use' });
    });
  }

  it('ModelEventReader: the calls as their events come', () => {
    const r = new ModelEventReader({ format: 'openai-responses' });
    for (const e of everyItem.split(/(?<=\n\n)/)) r.read(e.slice(e.indexOf('data: ') + 6, -2));
    expect(r.toolCalls).toEqual(EVERY);
  });

  it('the arguments count toward maxArgumentBytes: past it, ERR_ARGUMENTS_TOO_LARGE at the data of the item\'s end', () => {
    const limit = enc.encode(EVERY[0].arguments + EVERY[1].arguments).length - 1; // (the first call's fit, the second's not)
    const at = everyItem.indexOf('data: ', everyItem.indexOf('event: response.output_item.done', everyItem.indexOf('"cu_1"'))) + 6;
    for (const chunks of standardChunkings(body)) {
      const m = new ModelStream({ format: 'openai-responses', maxArgumentBytes: limit });
      const err = thrown(() => {
        for (const c of chunks) m.push(c);
        m.flush();
      });
      expect(err).toBeInstanceOf(ModelStreamError);
      expect(err).toMatchObject({ code: 'ERR_ARGUMENTS_TOO_LARGE', offset: enc.encode(everyItem.slice(0, at)).length });
      // (the calls as they stood before that event: the computer's call not begun)
      expect(m.toolCalls).toEqual([EVERY[0]]);
    }
  });

  it('an item member named __proto__ stays a member of the arguments', () => {
    const odd = created + item(0, patch, { ...patch, ['__proto__']: { x: 1 } }) + completed;
    expect(odd).toContain('"__proto__":{"x":1}');
    const m = new ModelStream({ format: 'openai-responses' });
    m.push(enc.encode(odd));
    m.flush();
    expect(m.toolCalls[0].arguments).toBe(`{"operation":${JSON.stringify(OPERATION)},"caller":{"type":"direct"},"__proto__":{"x":1}}`);
  });
});
