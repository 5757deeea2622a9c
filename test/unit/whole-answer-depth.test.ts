// A whole answer (a JSON body where a stream was asked) nested deeper than the core reads any
// event (JSON_MAX_DEPTH): a typed error at the bracket that passes it, as a streamed event's is,
// whatever the format and however the body was cut; before, writing its events overflowed the
// stack (a RangeError out of flush(), which a gateway's 'end' listener did not expect).
import { describe, expect, it } from 'vitest';
import { MODEL_FORMATS, type ModelFormat, ModelStream, ModelStreamError, SseRelay } from '../../bindings/index.js';
import { JSON_MAX_DEPTH } from '../../bindings/core/generated/abi.js';
import { standardChunkings } from '../helpers/random.js';

const enc = new TextEncoder();
/** An object body whose member `a` is nested `depth` objects deep in all (the body itself the first). */
const nested = (depth: number, lead = '') => enc.encode(`${lead}${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);

/** What reading `bytes` in `chunks` gives: the error's code and offset, or 'read'. */
function read(make: () => ModelStream | SseRelay, chunks: Uint8Array[]): string {
  const s = make();
  try {
    for (const c of chunks) s.push(c);
    s.flush();
    // (a relay writes its client's error event where a stream throws)
    const e = s instanceof SseRelay ? s.error : undefined;
    return e === undefined ? 'read' : `${e.code} at ${e.offset}`;
  } catch (e) {
    if (!(e instanceof ModelStreamError)) return `not typed: ${(e as Error).name}: ${(e as Error).message}`;
    return `${e.code} at ${e.offset}`;
  }
}

// (the formats whose bodies a stream reads: AWS's binary ones and the line formats too)
const formats = MODEL_FORMATS.filter((f) => f !== 'ddg') as ModelFormat[];

describe('a whole answer nested deeper than JSON_MAX_DEPTH', () => {
  it.each(formats)('%s: ERR_BAD_EVENT at the bracket that opens depth 513, for a stream and a relay, at every cut', (format) => {
    const lead = '  ';
    const bytes = nested(100_000, lead);
    const at = lead.length + 5 * JSON_MAX_DEPTH; // (the 513th `{`)
    const want = `ERR_BAD_EVENT at ${at}`;
    expect(read(() => new ModelStream({ format }), [bytes])).toBe(want);
    for (const to of ['openai', 'anthropic'] as const) expect(read(() => new SseRelay({ from: format, to }), [bytes])).toBe(want);
    const small = nested(600, lead);
    for (const chunks of standardChunkings(small)) expect(read(() => new ModelStream({ format }), chunks), `${chunks.length} reads`).toBe(want);
  });

  // (a deep member inside an answer each format writes as events: the writing overflowed the stack)
  const DEEP = '@DEEP@';
  const answers: [ModelFormat, string, number][] = [
    ['openai', `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hi","x":${DEEP}},"finish_reason":"stop"}]}`, 4],
    ['anthropic', `{"id":"msg","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"t","name":"f","input":${DEEP}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}`, 3],
    ['gemini', `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":${DEEP}}}]},"finishReason":"STOP","index":0}]}`, 7],
    ['bedrock', `{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"t","name":"f","input":${DEEP}}}]}},"stopReason":"tool_use","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}}`, 6],
  ];
  it.each(answers)('%s: an answer with a member nested 100,000 deep: ERR_BAD_EVENT at its 513th bracket, not a RangeError', (format, shape, before) => {
    const [head, tail] = shape.split(DEEP);
    const bytes = enc.encode(`${head}${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}${tail}`);
    const want = `ERR_BAD_EVENT at ${head.length + 5 * (JSON_MAX_DEPTH - before)}`;
    expect(read(() => new ModelStream({ format }), [bytes])).toBe(want);
    for (const to of ['openai', 'anthropic'] as const) expect(read(() => new SseRelay({ from: format, to }), [bytes])).toBe(want);
  });

  it('its message says so; 512 levels are read as any body is', () => {
    const m = new ModelStream({ format: 'openai' });
    m.push(nested(JSON_MAX_DEPTH + 1));
    expect(() => m.flush()).toThrow(`The openai response, a whole answer in a JSON body, is nested deeper than ${JSON_MAX_DEPTH} levels (at byte offset ${5 * JSON_MAX_DEPTH})`);
    // (512 deep: no whole answer of the format, nor its error: the body is neither)
    const ok = new ModelStream({ format: 'openai' });
    ok.push(nested(JSON_MAX_DEPTH));
    expect(() => ok.flush()).toThrow(/is neither an event stream nor|not an event stream/);
  });
});
