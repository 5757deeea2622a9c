// What the gateway answers itself, in the client's dialect: its JSON replies (sendJson), its error
// bodies in OpenAI's shape (errorBody) and Anthropic's (anthropicBody), an upstream's error body
// in the client's words (upstreamError), a reply written straight to a socket that Node's HTTP
// server does not answer (socketReply); and whether a client is still there to take one (clientGone).
import { describeFormat } from 'seam-stream';

const dialects = new WeakMap(); // response → its client's dialect (when not openai)

/** The gateway's replies to `res` are in `dialect`'s shape (`openai`, Chat Completions, unless said). */
export function replyIn(res, dialect) {
  if (dialect === 'anthropic') dialects.set(res, dialect);
}

/** Anthropic's word for an error of an HTTP status (its API's error types). */
const ANTHROPIC_ERRORS = {
  400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error', 405: 'invalid_request_error',
  408: 'invalid_request_error', 413: 'request_too_large', 429: 'rate_limit_error', 503: 'overloaded_error', 529: 'overloaded_error',
};

/** An HTTP error body (OpenAI's shape, as errorBody writes it) in the client's dialect. */
function shaped(dialect, status, value) {
  if (dialect !== 'anthropic' || value.type === 'error') return value; // (a body in Anthropic's shape already)
  const { message, type } = value.error;
  return anthropicBody(ANTHROPIC_ERRORS[status] ?? (type === 'overloaded' ? 'overloaded_error' : 'api_error'), message);
}

/**
 * An error body (OpenAI's shape, as errorBody writes it) in the dialect of the response `res`, if
 * there is one (a request whose head came: its route is known), else as it is.
 */
export const shapedFor = (res, status, value) => shaped(res == null ? undefined : dialects.get(res), status, value);

/**
 * Whether a client's connection is closed: its socket destroyed (Node destroys it in the tick it
 * reads the client's reset) though the response's 'close' comes in a later tick. A read of the
 * upstream in that tick is not relayed to it: the stream ends as the client's leaving ends it.
 */
export const clientGone = (res) => res.destroyed || res.socket?.destroyed === true;

/**
 * A JSON reply, an error's body in the client's dialect; a response whose head is sent already is
 * cut off instead. Returns the body's bytes (0 when cut off).
 */
export function sendJson(res, status, value, extraHeaders) {
  if (res.headersSent) {
    res.destroy();
    return 0;
  }
  const body = JSON.stringify(status >= 400 ? shaped(dialects.get(res), status, value) : value);
  const length = Buffer.byteLength(body);
  res.writeHead(status, { 'content-type': 'application/json', 'x-content-type-options': 'nosniff', 'content-length': length, ...extraHeaders });
  res.end(body);
  return length;
}

export const errorBody = (message, type, code, extra) => ({ error: { message, type, code: code ?? null, ...extra } });
/** An error body in Anthropic's shape, with one of Anthropic's error types. */
export const anthropicBody = (type, message) => ({ type: 'error', error: { type, message } });

/** An upstream error body's message, type and code (as the format writes them; a body of another kind is not passed on). */
export function upstreamError(format, status, text, dialect) {
  let v;
  // (after a BOM at its start, as a whole answer is read)
  try { v = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text); } catch { v = undefined; }
  const facts = describeFormat(format);
  const e = facts.errorOfBody(v);
  if (e !== undefined && dialect === 'anthropic') {
    // (to Anthropic's clients the provider's own type for it in Anthropic's words, as a streamed
    // error event has it; the status's when the format names none)
    const type = facts.anthropicErrorType(e.detail);
    if (type !== 'api_error') return anthropicBody(type, e.message);
  }
  if (e !== undefined) return errorBody(e.message, e.type ?? 'upstream_error', e.code ?? null);
  return errorBody(`upstream answered HTTP ${status}`, 'upstream_error', null);
}

/** What stands for the gateway's upstream key where the upstream's words for a client had it. */
const REDACTED = '[redacted]';

/**
 * The gateway's upstream key `key` taken out of what the upstream says to a client (its error
 * messages: some servers say the key they were sent, and the client is not to learn it), as
 * `text(string)` and `bytes(buffer)` (an error event as the relay wrote it: the key as it is, and
 * as JSON writes it in a string); null without a key, or with one shorter than 8 characters, which
 * would take words out of the messages rather than a key.
 */
export function redactor(key) {
  if (key === undefined || key.length < 8) return null;
  const escaped = JSON.stringify(key).slice(1, -1);
  const forms = [...new Set([key, escaped])].map((f) => Buffer.from(f, 'latin1'));
  const replacement = Buffer.from(REDACTED);
  return {
    text: (s) => (s.includes(key) || s.includes(escaped) ? s.replaceAll(key, REDACTED).replaceAll(escaped, REDACTED) : s),
    bytes(b) {
      for (const f of forms) {
        let at = b.indexOf(f);
        if (at === -1) continue;
        const parts = [];
        let from = 0;
        for (; at !== -1; at = b.indexOf(f, from)) {
          parts.push(b.subarray(from, at), replacement);
          from = at + f.length;
        }
        parts.push(b.subarray(from));
        b = Buffer.concat(parts);
      }
      return b;
    },
  };
}

/**
 * A reply written to a client's socket as it is (Node's HTTP server makes no response for it: a
 * request it refused, a connection over a cap): `body` as JSON, with the request id `id` as every
 * answer has it, then the connection closes. `extra`: header lines of its own, each ending in CRLF.
 */
export function socketReply(status, reason, body, id, extra = '') {
  const json = JSON.stringify(body);
  return `HTTP/1.1 ${status} ${reason}\r\nx-request-id: ${id}\r\ncontent-type: application/json\r\nx-content-type-options: nosniff\r\ncontent-length: ${Buffer.byteLength(json)}\r\n${extra}connection: close\r\n\r\n${json}`;
}

/**
 * The upstream's word on when to retry an error answer, passed on to its client (the official
 * clients wait that long before their retry, where they would wait their own short backoff, and
 * come back while the provider still refuses): `retry-after` as HTTP writes it (whole seconds, or
 * an HTTP date) and `retry-after-ms` (OpenAI's and Anthropic's clients read it first), each only
 * in that form; anything else is not passed on.
 */
export function retryHeaders(headers) {
  const out = {};
  const after = headers['retry-after'];
  if (typeof after === 'string' && (/^\d{1,9}$/.test(after) || /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(after))) out['retry-after'] = after;
  const ms = headers['retry-after-ms'];
  if (typeof ms === 'string' && /^\d{1,12}(?:\.\d{1,6})?$/.test(ms)) out['retry-after-ms'] = ms;
  return out;
}
