// Which format a stream is, from its first bytes (when --format is not given).
import { describeFormat } from 'seam-stream';
import type { Format, ModelFormat } from './formats.js';

/** Bytes read before deciding with what is there. */
export const SNIFF_BYTES = 64 * 1024;

const ANTHROPIC_TYPES = new Set(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop', 'ping']);
const dec = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

function parse(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The members of an HTTP error body that has no `error` member (AWS's, a web framework's). */
const ERROR_BODY_KEYS = new Set(['message', 'Message', '__type', 'type', 'code', 'status', 'detail', 'title', 'request_id', 'requestId']);

/** A JSON object with only an error body's members, and its message (or detail) as a string. */
function isErrorBody(v: Obj): boolean {
  const keys = Object.keys(v);
  return keys.every((k) => ERROR_BODY_KEYS.has(k)) && [v.message, v.Message, v.detail].some((m) => typeof m === 'string');
}

/**
 * The formats whose whole answer (a JSON body asked without streaming) a body is sniffed as, in
 * the order they are tried: what each one's answer is, the model formats say (describeFormat's
 * `isWholeAnswer` and `beginsWholeAnswer`). Claude's answer on Bedrock's InvokeModel is
 * Anthropic's message, read as Anthropic's.
 */
const WHOLE_ANSWERS: readonly ModelFormat[] = ['openai', 'anthropic', 'openai-responses', 'gemini', 'bedrock'];

/** The format whose whole answer this JSON value (an object) is, if it is one. */
function wholeAnswer(v: unknown): Format | undefined {
  if (!isObj(v)) return undefined;
  return WHOLE_ANSWERS.find((f) => describeFormat(f).isWholeAnswer(v));
}

/** The format whose whole answer a JSON body too long to sniff whole begins as (its first keys), if any. */
function wholeAnswerOfPrefix(head: string): Format | undefined {
  return WHOLE_ANSWERS.find((f) => describeFormat(f).beginsWholeAnswer(head));
}

/** The model format an SSE event's type and data look like, or 'sse'. */
function sseFlavour(type: string | undefined, data: string): Format {
  if (type?.startsWith('response.')) return 'openai-responses';
  if (type !== undefined && ANTHROPIC_TYPES.has(type)) return 'anthropic';
  if (data === '[DONE]') return 'openai';
  const v = parse(data);
  if (!isObj(v)) return 'sse';
  if (Array.isArray(v.choices) || v.object === 'chat.completion.chunk') return 'openai';
  if (Array.isArray(v.candidates) || isObj(v.promptFeedback) || isObj(v.usageMetadata)) return 'gemini';
  if (typeof v.type === 'string') {
    if (v.type.startsWith('response.')) return 'openai-responses';
    if (ANTHROPIC_TYPES.has(v.type)) return 'anthropic';
    if (v.type === 'error' && isObj(v.error)) return 'anthropic';
  }
  if ('error' in v) return 'openai';
  if (typeof v.message === 'string' || typeof v.content === 'string' || v.action !== undefined) return 'ddg';
  return 'sse';
}

/** The model format the beginning of an SSE event's JSON data looks like (its first keys), or 'sse'. */
function sseFlavourOfPrefix(data: string): Format {
  const head = data.slice(0, 4096);
  if (/"object"\s*:\s*"chat\.completion\.chunk"|"choices"\s*:/.test(head)) return 'openai';
  if (/"candidates"\s*:/.test(head)) return 'gemini';
  if (/"type"\s*:\s*"response\./.test(head)) return 'openai-responses';
  const t = /"type"\s*:\s*"([a-z_]+)"/.exec(head);
  if (t !== null && ANTHROPIC_TYPES.has(t[1])) return 'anthropic';
  return 'sse';
}

/**
 * The format of a stream that begins with `bytes`, or undefined when more bytes are needed
 * (`ended`: there are no more). An empty input (nothing, or only a BOM) is 'empty'.
 */
export function sniff(bytes: Uint8Array, ended: boolean): Format | 'empty' | undefined {
  const enough = ended || bytes.length >= SNIFF_BYTES;
  // (the first SNIFF_BYTES decide, however many bytes the read that brought them held)
  if (bytes.length > SNIFF_BYTES) bytes = bytes.subarray(0, SNIFF_BYTES);
  const binary = eventStream(bytes, enough);
  if (binary === 'more') return undefined;
  if (binary !== undefined) return binary;
  let start = 0;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) start = 3;
  else if (!ended && bytes.length < 3 && bytes.every((b, i) => b === [0xef, 0xbb, 0xbf][i])) return undefined;
  const text = dec.decode(bytes.subarray(start));
  const body = text.replace(/^[ \t\r\n]+/, '');
  if (body === '') return ended ? (text === '' ? 'empty' : 'text') : undefined;
  // complete lines only (the last one may be cut), unless there is nothing more to come
  const all = body.split(/\r\n|\r|\n/);
  const complete = ended ? all : all.slice(0, -1);
  // Gemini's JSON array (streamGenerateContent without alt=sse), its chunks or its error: a body of
  // the format whose provider answers one, whatever its lines
  if (/^\[\s*\{\s*"(candidates|error|usageMetadata|promptFeedback|modelVersion)"\s*:/.test(body)) return 'gemini';
  if (body[0] === '{' || body[0] === '[') {
    // a first line past SNIFF_BYTES: what its keys so far say (a line of Ollama's), else a body
    if (complete.length === 0) return enough ? (/^\{\s*"model"\s*:/.test(body) ? 'ollama' : wholeAnswerOfPrefix(body.slice(0, 4096)) ?? 'openai') : undefined;
    const v = parse(complete[0]);
    // a JSON document on several lines: a body, not NDJSON: a whole answer's format once it is whole
    // here, whatever the order of its keys; until then what its first keys say, else more is read
    // (to its end or SNIFF_BYTES: a read that ended after its first lines says nothing yet)
    if (v === undefined) {
      const doc = parse(body);
      const whole = doc === undefined ? undefined : wholeAnswer(doc);
      if (whole !== undefined) return whole;
      // (AWS's error body pretty-printed, as on one line)
      if (isObj(doc) && isErrorBody(doc) && ('__type' in doc || typeof doc.Message === 'string')) return 'bedrock';
      const prefix = wholeAnswerOfPrefix(body.slice(0, 4096));
      return prefix ?? (enough || doc !== undefined ? 'openai' : undefined);
    }
    const whole = wholeAnswer(v);
    if (whole !== undefined) return whole;
    if (isObj(v)) {
      if ('model' in v && ('message' in v || 'response' in v || 'done' in v)) return 'ollama';
      if ('done' in v && ('message' in v || 'response' in v)) return 'ollama';
      if (typeof v.error === 'string') return 'ollama';
      if ('error' in v || v.type === 'error') return 'openai';
      // an error body of another shape (AWS's `{"message"}` or `{"Message", "__type"}`, a proxy's
      // `{"detail"}`): the provider's error, which a model format reads, not an answer's text
      if (isErrorBody(v)) return '__type' in v || typeof v.Message === 'string' ? 'bedrock' : 'openai';
      if (typeof v.message === 'string' || v.action !== undefined) return 'ddg';
    }
    return 'ndjson';
  }
  const sseField = /^(data|event|id|retry)(:|$)|^:/;
  if (!sseField.test(body)) {
    // a first line not ended yet may still become a field's ('da', 'even'), or an HTML page's
    // first tag ('<!DOC', '<ht': a page is said as one, never printed as text)
    const first = all[0];
    if (!enough && complete.length === 0 && (first.startsWith('<') || ['data:', 'event:', 'id:', 'retry:'].some((f) => f.startsWith(first)))) return undefined;
    return 'text';
  }
  let type: string | undefined;
  for (const line of complete) {
    if (line === '') {
      type = undefined;
      continue;
    }
    const m = /^([^:]*)(?::(.*))?$/.exec(line)!;
    const value = (m[2] ?? '').replace(/^ /, '');
    if (m[1] === 'event') type = value;
    else if (m[1] === 'data') return sseFlavour(type, value);
    else if (m[1] === '' && type === undefined) continue; // a comment
  }
  if (type !== undefined && (type.startsWith('response.') || ANTHROPIC_TYPES.has(type)) && enough) return sseFlavour(type, '');
  if (!enough) return undefined;
  // a first data line past SNIFF_BYTES: what its JSON's keys so far say
  const open = complete.length < all.length ? /^data: ?(.*)$/s.exec(all[all.length - 1]) : null;
  return open !== null ? sseFlavourOfPrefix(open[1]) : 'sse';
}

/** CRC-32/ISO-HDLC, bit by bit (12 bytes of a prelude: no table needed). */
function crc32(b: Uint8Array): number {
  let c = 0xffffffff;
  for (const x of b) {
    c ^= x;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

/** A first byte of a message's length up to 512 MiB that no text begins with. */
const preludeStart = (b: number): boolean => b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d;

/**
 * AWS's event stream (Bedrock) when the bytes begin with a message prelude whose CRC matches (or
 * whose CRC does not, its first header's name after it: a damaged message, which decode says is):
 * `bedrock-invoke` when its `:event-type` is `chunk` (InvokeModelWithResponseStream), `bedrock`
 * otherwise; 'more' when that cannot be told yet (a prelude not whole: a text stream never begins
 * with a control byte other than a tab or a line end, and the length of a message up to 512 MiB,
 * the largest limit accepted, begins with one, 0x00 to 0x1F; its headers not whole).
 */
function eventStream(bytes: Uint8Array, enough: boolean): Format | 'more' | undefined {
  if (bytes.length < 12) return !enough && bytes.length > 0 && preludeStart(bytes[0]) ? 'more' : undefined;
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const total = v.getUint32(0);
  const headers = v.getUint32(4);
  if (total < 16 || headers > total - 16) return undefined;
  if (v.getUint32(8) !== crc32(bytes.subarray(0, 8))) {
    // a prelude damaged in transit (its CRC does not match): still a message when its first
    // header's name follows it, `:event-type` or another of AWS's (a length byte, then `:`), so
    // that decode says where the stream is damaged, not that a text has bytes that are not UTF-8
    if (!preludeStart(bytes[0])) return undefined;
    if (bytes.length < 14) return enough ? undefined : 'more';
    if (bytes[12] < 2 || bytes[12] > 32 || bytes[13] !== 0x3a) return undefined;
  }
  if (!enough && bytes.length < 12 + headers) return 'more';
  const h = dec.decode(bytes.subarray(12, Math.min(bytes.length, 12 + headers)));
  return /:event-type\x07\x00\x05chunk/.test(h) ? 'bedrock-invoke' : 'bedrock';
}

/**
 * What to say of an input that begins with UTF-16's byte order mark (PowerShell's `>` saves text
 * so): no stream is UTF-16, and reading it leniently gives nothing of use.
 */
export function utf16(first: Uint8Array | undefined): string | undefined {
  if (first === undefined || first.length < 2) return undefined;
  const bom = first[0] === 0xff && first[1] === 0xfe ? 'FF FE' : first[0] === 0xfe && first[1] === 0xff ? 'FE FF' : undefined;
  if (bom === undefined) return undefined;
  return `: the input is UTF-16 (it begins with the byte order mark ${bom}), not UTF-8 as streams are; save the capture as it came (curl -o FILE; PowerShell's > writes UTF-16), or convert it (iconv -f UTF-16 -t UTF-8)`;
}

/**
 * The title of an HTML page that `bytes` begin (after white space or a BOM): '' for a page whose
 * title is not in them, undefined when they do not begin one. A stream never does; a server's or
 * a proxy's error page (502 Bad Gateway, a gateway timeout) does.
 */
export function htmlPage(bytes: Uint8Array): string | undefined {
  const start = dec.decode(bytes.subarray(0, 4096)).replace(/^\uFEFF/, '').trimStart();
  if (!/^<(?:!doctype\s+html|html[\s>]|head[\s>])/i.test(start)) return undefined;
  const t = /<title[^>]*>([^<]*)</i.exec(dec.decode(bytes.subarray(0, SNIFF_BYTES)));
  return t ? t[1].replace(/\s+/g, ' ').trim() : '';
}

/** What decode and check say of an HTML page in place of a stream. */
export function htmlSaid(title: string): string {
  return `an HTML page${title !== '' ? ` (${JSON.stringify(title)})` : ''}, not a stream: a server's or a proxy's error page, most likely`;
}
