// The demo's model stream, byte for byte: an OpenAI chat completions stream (the wire format of
// `stream: true` with `stream_options.include_usage`), CRLF line ends, a BOM in front (as servers
// writing UTF-8 with a preamble send), a keep-alive comment, and deltas cut where tokenizers cut
// them: inside emoji ZWJ sequences and flags, between a letter and its combining accent, inside
// Hangul syllables written as jamo (NFD). No imports: the tests read it too.

export const DELTAS: readonly string[] = [
  'Here', ' is', ' a', ' multilingual', ' reply', ':', '\n',
  '中文', '：', '你好', '，', '世界', '。', '\n',
  'Emoji', ': ', '👩', '\u200d', '💻', ' ', '👨\u200d👩', '\u200d👧\u200d👦', ' ', '🏳\ufe0f', '\u200d🌈', '\n',
  'Flags', ': ', '🇯', '🇵', ' ', '🇫🇷', ' ', '🇺', '🇦', '\n',
  'Accents', ': ', 'cafe', '\u0301', ', ', 'A\u030angstro', '\u0308m', ', ', 'nai\u0308ve', ', ', 'N\u0303', 'o', '\u0303', '\n',
  'Hangul', ': ', '\u1112\u1161', '\u11ab', '\u1100\u1173', '\u11af', '.',
];

const CRLF = '\r\n';

function chunk(delta: Record<string, unknown>, finish: string | null): string {
  return JSON.stringify({
    id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG', object: 'chat.completion.chunk', created: 1741569952,
    model: 'gpt-4o-2024-08-06', system_fingerprint: 'fp_eb9dce56a8',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null,
  });
}

/** The stream's wire text (before UTF-8 encoding), its BOM included. */
export function demoWire(): string {
  let s = '\ufeff';
  s += `data: ${chunk({ role: 'assistant', content: '', refusal: null }, null)}${CRLF}${CRLF}`;
  DELTAS.forEach((d, i) => {
    if (i === 24) s += `: keep-alive${CRLF}${CRLF}`;
    s += `data: ${chunk({ content: d }, null)}${CRLF}${CRLF}`;
  });
  s += `data: ${chunk({}, 'stop')}${CRLF}${CRLF}`;
  s += `data: ${JSON.stringify({
    id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG', object: 'chat.completion.chunk', created: 1741569952, model: 'gpt-4o-2024-08-06',
    system_fingerprint: 'fp_eb9dce56a8', choices: [], usage: { prompt_tokens: 24, completion_tokens: 61, total_tokens: 85 },
  })}${CRLF}${CRLF}`;
  s += `data: [DONE]${CRLF}${CRLF}`;
  return s;
}

export function demoBytes(): Uint8Array {
  return new TextEncoder().encode(demoWire());
}

/**
 * The cut positions that break something somewhere: inside a UTF-8 character (the BOM's
 * included), between a CR and its LF, and inside `[DONE]`. Sorted, each a byte offset 1..n-1
 * where a read ends.
 */
export function nastyPositions(bytes: Uint8Array): number[] {
  const out = new Set<number>();
  for (let p = 1; p < bytes.length; p++) {
    if ((bytes[p] & 0xc0) === 0x80) out.add(p); // a continuation byte: the cut is inside a character
    if (bytes[p - 1] === 13 && bytes[p] === 10) out.add(p); // between CR and LF
  }
  const done = new TextEncoder().encode('[DONE]');
  for (let p = 0; p + done.length <= bytes.length; p++) {
    if (done.every((b, k) => bytes[p + k] === b)) for (let k = 1; k < done.length; k++) out.add(p + k);
  }
  return [...out].sort((a, b) => a - b);
}

/** Where the stream is cut to lose its completion: right before `data: [DONE]`. */
export function beforeDone(bytes: Uint8Array): number {
  const marker = new TextEncoder().encode('data: [DONE]');
  for (let p = bytes.length - marker.length; p >= 0; p--) if (marker.every((b, k) => bytes[p + k] === b)) return p;
  throw new Error('no [DONE] in the demo stream');
}
