// `check`'s offsets of a provider's error event, read in process (the command's Checker over the
// package): a Gemini error chunk mid-stream is reported at the first byte of the event that
// carried it (its first field line: a keep-alive comment before it in its block is no part of
// it), as an OpenAI error chunk and an Anthropic error event are, whatever the line ends (LF,
// CR LF, CR), and at every split of the stream into two reads and one byte at a time.
import { describe, expect, it } from 'vitest';
import { Checker } from '../../cli/check.js';

const enc = new TextEncoder();
const limits = { maxEventBytes: 1 << 20, maxLineBytes: 1 << 20, maxTextBytes: 1 << 20 } as ConstructorParameters<typeof Checker>[1];

/** The offsets of the provider errors check reports when it reads `body` in pieces ending at `cuts`. */
function providerOffsets(format: 'gemini' | 'openai' | 'anthropic', body: Uint8Array, cuts: number[]): number[] {
  const c = new Checker(format, limits, 0, 50);
  let s = 0;
  for (const e of [...cuts, body.length]) {
    c.push(body.subarray(s, e));
    s = e;
  }
  c.end();
  return c.problems.filter((p) => p.kind === 'provider').map((p) => p.offset);
}

const streams = {
  gemini: {
    event: (t: string) => `data: {"candidates": [{"content": {"parts": [{"text": "${t}"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 5,"totalTokenCount": 5}}`,
    error: 'data: {"error": {"code": 503,"message": "The model is overloaded.","status": "UNAVAILABLE"}}',
  },
  openai: {
    event: (t: string) => `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"${t}"},"finish_reason":null}]}`,
    error: 'data: {"error": {"message": "The model is overloaded.", "type": "server_error"}}',
  },
  anthropic: {
    event: (t: string) => `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${t}"}}`,
    error: 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"The model is overloaded."}}',
  },
};

describe('check: a provider error event at the first byte of its event', () => {
  const cases = (['gemini', 'openai', 'anthropic'] as const).flatMap((format) => (['\n', '\r\n', '\r'] as const).flatMap((nl) =>
    (['', ': keep-alive', 'id: 7'] as const).map((lead) => [format, JSON.stringify(nl), lead, nl] as const)));

  it.each(cases)('%s, line ends %s, %j before the error in its block: whole, at every split, dripped', (format, _, lead, nl) => {
    const s = streams[format];
    const head = `${s.event('Der Anfang, ').replaceAll('\n', nl)}${nl}${nl}${s.event('und dann').replaceAll('\n', nl)}${nl}${nl}`;
    const body = `${head}${lead === '' ? '' : lead + nl}${s.error.replaceAll('\n', nl)}${nl}${nl}`;
    const bytes = enc.encode(body);
    // the error's event begins at its first field line (a comment before it is no part of it)
    const want = enc.encode(head).length + (lead.startsWith(':') ? enc.encode(lead + nl).length : 0);
    expect(providerOffsets(format, bytes, [])).toEqual([want]);
    for (let i = 1; i < bytes.length; i++) expect(providerOffsets(format, bytes, [i]), `split at ${i}`).toEqual([want]);
    expect(providerOffsets(format, bytes, Array.from({ length: bytes.length - 1 }, (_, i) => i + 1)), 'dripped').toEqual([want]);
  });
});

describe('check: Vertex\'s streamed arguments at a path they cannot be written at', () => {
  it('is a problem at its event, named as not an event of the format (not as invalid JSON); the events after it are still read', () => {
    const part = (fc: unknown) => `data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":${JSON.stringify(fc)}}]}}]}\r\n\r\n`;
    const head = part({ name: 'f', willContinue: true }) + part({ partialArgs: [{ jsonPath: '$.list[0]', stringValue: 'a' }], willContinue: true });
    const bad = part({ partialArgs: [{ jsonPath: '$.list[2]', stringValue: 'c' }], willContinue: true });
    const body = enc.encode(`${head}${bad}data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{}}]},"finishReason":"STOP"}]}\r\n\r\n`);
    const at = enc.encode(head).length;
    for (const cuts of [[], [at + 3], Array.from({ length: body.length - 1 }, (_, i) => i + 1)]) {
      const c = new Checker('gemini', limits, 0, 50);
      let s = 0;
      for (const e of [...cuts, body.length]) {
        c.push(body.subarray(s, e));
        s = e;
      }
      c.end();
      expect(c.problems, `${cuts.length + 1} reads`).toEqual([
        { kind: 'json', offset: at, message: `not an event of the gemini format in the event at byte ${at}: the jsonPath "$.list[2]" is not the next element of its array (1)` },
      ]);
      expect(c.done).toBe(true);
    }
  });
});
