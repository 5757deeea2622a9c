// A model gateway as one fetch handler, Web APIs only: the same file runs unchanged on Cloudflare
// Workers (workerd), Deno (`deno serve --unstable-no-legacy-abort`) and Bun (`bun gateway.mjs`),
// and in anything else that calls `export default { fetch }` (test/runtimes/edge.test.ts runs it
// on all three).
//
//   POST /v1/chat/completions   an OpenAI Chat client     } streamed from the upstream, relayed by
//   POST /v1/messages           an Anthropic Messages one } SseRelayStream in the client's format
//
// The upstream's answer is relayed in one line, `upstream.body.pipeThrough(new SseRelayStream(…))`:
// whole, validated events in the client's format, the client's completion only after the upstream's,
// an error event in the client's shape otherwise, an upstream connection that drops included.
// A client that does not ask `stream: true` (`stream: false`, or no `stream`, as the APIs read it)
// gets one JSON answer (a `chat.completion`, a `message`). From an upstream of the client's own API
// (OpenAI to OpenAI, Anthropic to Anthropic) it is the upstream's own whole answer, passed through
// with its status (`passWhole`: all it says, OpenAI's `system_fingerprint` and `logprobs`,
// Anthropic's citations and server tool blocks, which no answer rebuilt from a stream has): read to
// the end of its JSON object, at most MAX_ANSWER_BYTES of it, and anything but a JSON object (a web
// page at the upstream URL) a 502, `ERR_BAD_RESPONSE`. From another API the upstream is asked to
// stream, its stream read with a ModelStream (at most MAX_ANSWER_BYTES of it) and written whole by
// `wholeAnswer`, what the streamed answer carries as the official clients read it; a stream that
// fails, breaks off or passes the limit is a 502 with the error in the client's shape
// (`wholeError`), never an answer.
// Configuration (the only non-Web part: where a
// runtime keeps its variables): a Worker's bindings (`env`), else `process.env` (Deno, Bun):
//   UPSTREAM          the upstream's base URL (http: or https:)
//   UPSTREAM_FORMAT   openai (default), anthropic or ollama: its API
//   UPSTREAM_KEY      the key sent to the upstream (optional; taken out of the upstream's words to a client)
//   MAX_ANSWER_BYTES  the bytes of the upstream's answer read for a whole answer, its stream or its own (default 8 MiB, at most 512 MiB)
//   MAX_REQUEST_BYTES the bytes of a client's request body read (default 1 MiB, at most 512 MiB; past it a 413)
//   PORT              Bun's port (Deno: `deno serve --port`)
// A request nested deeper than 512 levels (JSON_MAX_DEPTH) is a 400 in the client's shape, as the
// Node gateway's, the upstream not called.
// The requests carry text messages (and the model, max_tokens, temperature); examples/gateway/ is the
// full gateway for Node, with tools, keys, limits and metrics.
import { JSON_MAX_DEPTH, MAX_LIMIT_BYTES, ModelStream, ModelStreamError, SseRelayStream, describeFormat, jsonTooDeep, readChunks, wholeAnswer, wholeError } from 'seam-stream';

const API = { '/v1/chat/completions': 'openai', '/v1/messages': 'anthropic' };
const PATH = { openai: '/v1/chat/completions', anthropic: '/v1/messages', ollama: '/api/chat' };

/** A message's content as text (a string, or the text of its parts). */
const textOf = (content) => typeof content === 'string' ? content
  : Array.isArray(content) ? content.map((p) => (typeof p === 'string' ? p : p?.type === 'text' ? p.text : '')).join('') : '';

/** The client's request as the upstream's: its system text, its turns, model and limits; a stream unless `stream` is false. */
function upstreamBody(client, body, to, stream = true) {
  const system = [];
  if (client === 'anthropic' && body.system !== undefined) system.push(textOf(body.system));
  const turns = [];
  for (const m of body.messages ?? []) {
    if (m.role === 'system' || m.role === 'developer') system.push(textOf(m.content));
    else turns.push({ role: m.role, content: textOf(m.content) });
  }
  const max = body.max_tokens ?? body.max_completion_tokens;
  if (to === 'anthropic') {
    return { model: body.model, ...(system.length ? { system: system.join('\n\n') } : {}), messages: turns, max_tokens: max ?? 1024, temperature: body.temperature, stream };
  }
  const messages = [...(system.length ? [{ role: 'system', content: system.join('\n\n') }] : []), ...turns];
  if (to === 'ollama') return { model: body.model, messages, stream: true, options: { temperature: body.temperature } };
  return { model: body.model, messages, max_tokens: max, temperature: body.temperature, stream };
}

/** The bytes of an upstream's answer read for a whole answer (`stream: false`: its stream, or its own whole answer), unless MAX_ANSWER_BYTES says otherwise. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;
/**
 * MAX_ANSWER_BYTES (or MAX_REQUEST_BYTES, with its default `fallback`) as a limit: a whole number
 * of bytes, at most the library's MAX_LIMIT_BYTES, 512 MiB (a larger one is that), or the default
 * for none or one that is not a number above 0. A fraction or a larger number made every
 * `stream: false` request throw (the model stream's reasoning and arguments limits are whole bytes
 * up to MAX_LIMIT_BYTES).
 */
function answerLimit(value, fallback = MAX_ANSWER_BYTES) {
  const n = Math.floor(Number(value));
  return n > 0 ? Math.min(n, MAX_LIMIT_BYTES) : fallback;
}

/** The most bytes of a client's request body read, unless MAX_REQUEST_BYTES says otherwise (the Node gateway's default): 1 MiB. */
const MAX_REQUEST_BYTES = 1024 * 1024;

/**
 * The client's request body's bytes, or null when it is over `limit` bytes: refused by its
 * content-length before it is read, else read up to the limit and the rest cancelled (readBody);
 * undefined when it broke off. (Read whole by request.json(), a body of any size was held: Deno
 * sets no limit, Bun 128 MiB.)
 */
async function requestBytes(request, limit) {
  if (Number(request.headers.get('content-length')) > limit) return null;
  return readBody(request.body, limit, null);
}

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An error answer in the client's shape (`code`: OpenAI's, which Anthropic's shape has no place for). */
function failure(client, status, message, type = 'api_error', code = null) {
  const body = client === 'anthropic' ? { type: 'error', error: { type, message } } : { error: { message, type, code } };
  return json(status, body);
}

const json = (status, body, redact = null) => {
  const text = JSON.stringify(body);
  return new Response(redact === null ? text : redact.text(text), { status, headers: { 'content-type': 'application/json' } });
};

/** What stands for the upstream key where the upstream's words to a client had it. */
const REDACTED = '[redacted]';

/**
 * The upstream key taken out of what the upstream says to a client (its error messages: some
 * servers say the key they were sent, and the client is not to learn it), as the key is and as
 * JSON writes it in a string: `text(string)`, and `bytes(Uint8Array)` for what is passed on as it
 * came (a relayed stream's events, each whole in a chunk; an error body); null without a key, or
 * with one shorter than 8 characters, which would take words out rather than a key (the Node
 * gateway's redactor, examples/gateway/server/replies.mjs).
 */
function redactor(key) {
  if (typeof key !== 'string' || key.length < 8) return null;
  const escaped = JSON.stringify(key).slice(1, -1);
  const encoder = new TextEncoder();
  const forms = [...new Set([key, escaped])].map((f) => encoder.encode(f));
  const replacement = encoder.encode(REDACTED);
  return {
    text: (s) => (s.includes(key) || s.includes(escaped) ? s.replaceAll(key, REDACTED).replaceAll(escaped, REDACTED) : s),
    bytes(b) {
      for (const f of forms) b = replaced(b, f, replacement);
      return b;
    },
  };
}

/** `b` with each `f` in it replaced by `r` (`b` itself when it has none). */
function replaced(b, f, r) {
  const parts = [];
  let from = 0;
  let n = 0;
  for (let at = b.indexOf(f[0]); at !== -1 && at + f.length <= b.length; at = b.indexOf(f[0], at + 1)) {
    let i = 1;
    while (i < f.length && b[at + i] === f[i]) i++;
    if (i < f.length) continue;
    parts.push(b.subarray(from, at));
    n += at - from + r.length;
    from = at + f.length;
    at = from - 1;
  }
  if (parts.length === 0) return b;
  const out = new Uint8Array(n + b.length - from);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    out.set(r, o + p.length);
    o += p.length + r.length;
  }
  out.set(b.subarray(from), o);
  return out;
}

/** The most bytes of an upstream's error body read, for its message (the Node gateway's limit): 64 KiB. */
const ERROR_BODY_BYTES = 64 * 1024;

/** UTF-8's byte order mark. */
const BOM = [0xef, 0xbb, 0xbf];

/**
 * Where a JSON object ends in a body read piece by piece (the Node gateway's jsonObjectEnd,
 * examples/gateway/server/read-body.mjs; this file is one file): `scan(piece)` returns the index in
 * `piece` right after the object's closing brace, or -1 (not yet, or the body does not begin with
 * `{` after white space and a BOM at its start: then never). A BOM begins a whole answer that a
 * model stream reads (seam drops one BOM at a stream's start), so it may begin this body, whatever
 * pieces it comes in; one cut short is not. Its strings and their escapes are stepped over; whether
 * it is valid JSON is JSON.parse's to say.
 */
function objectEnd() {
  let depth = 0;
  let started = false;
  let over = false;
  let inString = false;
  let escaped = false;
  let before = 0; // (bytes before the object's `{`)
  let bom = 0; // (of them, a BOM's at the body's start)
  return (piece) => {
    if (over) return -1;
    for (let i = 0; i < piece.length; i++) {
      const c = piece[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 0x5c) escaped = true;
        else if (c === 0x22) inString = false;
      } else if (!started) {
        if (before === bom && bom < 3 && c === BOM[bom]) bom++;
        else if (bom === 1 || bom === 2) { over = true; return -1; } // (a BOM cut short)
        else if (c === 0x7b) { started = true; depth = 1; } else if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) { over = true; return -1; }
        before++;
      } else if (c === 0x22) inString = true;
      else if (c === 0x7b || c === 0x5b) depth++;
      else if ((c === 0x7d || c === 0x5d) && --depth === 0) { over = true; return i + 1; }
    }
    return -1;
  };
}

/**
 * A body (a ReadableStream, or null) read to the end of its JSON object, not of its connection (an
 * upstream can hold that open after it: the rest is cancelled), or to its end when it is no object
 * or `scan` is null (a client's request): its bytes; null past `limit` bytes (the rest cancelled,
 * nothing more held); undefined when its connection broke before that end. The pieces are copied
 * into one buffer as they come, which doubles as it fills (kept each as it came, a body sent a byte
 * a read would be held as an array a byte, some hundred times its size).
 */
async function readBody(body, limit, scan = objectEnd()) {
  if (body === null) return new Uint8Array(0);
  let all = new Uint8Array(0);
  let n = 0;
  try {
    // (leaving the loop, at the object's end or past the limit, cancels the rest)
    for await (let piece of readChunks(body)) {
      const end = scan === null ? -1 : scan(piece);
      if (end !== -1) piece = piece.subarray(0, end);
      if (n + piece.length > limit) return null;
      if (n + piece.length > all.length) {
        const more = new Uint8Array(Math.min(limit, Math.max(2 * all.length, n + piece.length, 16 * 1024)));
        more.set(all.subarray(0, n));
        all = more;
      }
      all.set(piece, n);
      n += piece.length;
      if (end !== -1) break;
    }
  } catch {
    return undefined; // (its connection broke before that end)
  }
  return all.subarray(0, n);
}

/** A body's bytes as JSON, or undefined. */
function parsed(bytes) {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return undefined;
  }
}

/**
 * The upstream's own whole answer (`stream: false`), asked of an upstream of the client's API,
 * passed through with its status: its JSON object as it came (a BOM before it read past, not passed
 * on, as a model stream reads a whole answer), read to that object's end, at most
 * `limit` bytes (past it the 502 a streamed one gets). A body that is no JSON object (a web page,
 * a proxy's, at the upstream URL) or breaks off is a 502, `ERR_BAD_RESPONSE`, not passed on.
 */
async function passWhole(upstream, client, limit, redact) {
  const bytes = await readBody(upstream.body, limit);
  if (bytes === null) return failure(client, 502, `the upstream's answer is over ${limit} bytes`);
  const answer = bytes === undefined ? undefined : parsed(bytes);
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) {
    const why = bytes === undefined ? 'broke off before its end' : 'is not a JSON object';
    return failure(client, 502, `the upstream's answer (HTTP ${upstream.status}) ${why}`, client === 'anthropic' ? 'api_error' : 'upstream_error', 'ERR_BAD_RESPONSE');
  }
  // (a BOM at its start, which the decoder read past, is no part of the answer, as seam's model
  // stream reads a whole answer: not passed on, as RFC 8259 asks of JSON sent; the Node gateway's too)
  const json = bytes[0] === BOM[0] && bytes[1] === BOM[1] && bytes[2] === BOM[2] ? bytes.subarray(3) : bytes;
  // (an error answered with a 2xx, as some servers and proxies answer: its message may say the key, taken out)
  const out = redact !== null && describeFormat(client).errorOfBody(answer) !== undefined ? redact.bytes(json) : json;
  return new Response(out, { status: upstream.status, headers: { 'content-type': 'application/json', 'x-content-type-options': 'nosniff' } });
}

/**
 * The whole answer (`stream: false`) of the upstream's stream in the client's API, one JSON
 * Response: read with a ModelStream, at most `limit` bytes of it (its text, reasoning and calls'
 * arguments within them too). The stream's failure (the provider's error, a bad event, the stream
 * cut short or its connection broken) is a 502 with the error as the streamed answer's error event
 * has it, the upstream key taken out of it (`redact`).
 */
async function whole(upstream, from, client, model, limit, redact) {
  const ms = new ModelStream({ format: from, normalize: false, maxTextBytes: limit, maxReasoningBytes: limit, maxArgumentBytes: limit, maxMediaBytes: 0 });
  const reader = upstream.body.getReader();
  const trailer = describeFormat(from).trailer;
  let text = '';
  let read = 0;
  try {
    for (;;) {
      let next;
      try {
        next = await reader.read();
      } catch {
        break; // (the upstream's connection broke: the stream ends here, cut short unless it was complete)
      }
      if (next.done) break;
      if ((read += next.value.byteLength) > limit) {
        reader.cancel().catch(() => {});
        return failure(client, 502, `the upstream's answer is over ${limit} bytes`);
      }
      text += ms.push(next.value);
      // (the completion, in a format that sends nothing after it: the answer is whole, the upstream not waited on)
      if (ms.status === 'done' && !trailer) {
        reader.cancel().catch(() => {});
        break;
      }
    }
    text += ms.flush();
    return json(200, wholeAnswer(ms, text, { to: client, model }));
  } catch (err) {
    reader.cancel().catch(() => {});
    if (err instanceof ModelStreamError) return json(502, wholeError(err, { from, to: client }), redact);
    return failure(client, 502, `the upstream's answer could not be read: ${err?.message ?? err}`);
  } finally {
    ms.dispose();
  }
}

export default {
  async fetch(request, env) {
    const config = typeof env?.UPSTREAM === 'string' ? env : globalThis.process?.env ?? {};
    const client = API[new URL(request.url).pathname];
    if (client === undefined) return failure('openai', 404, 'not found', 'not_found_error');
    if (request.method !== 'POST') return failure(client, 405, 'POST only', 'invalid_request_error');
    const from = config.UPSTREAM_FORMAT || 'openai';
    if (!Object.hasOwn(PATH, from) || !config.UPSTREAM) return failure(client, 500, 'the gateway has no valid UPSTREAM and UPSTREAM_FORMAT');
    const most = answerLimit(config.MAX_REQUEST_BYTES, MAX_REQUEST_BYTES);
    const raw = await requestBytes(request, most);
    if (raw === null) return failure(client, 413, `the request body is over ${most} bytes`, client === 'anthropic' ? 'request_too_large' : 'invalid_request_error', 'ERR_REQUEST_TOO_LARGE');
    // (nested deeper than seam's JSON reader reads an event, as the Node gateway refuses it: its
    // values (the model, the messages' content, max_tokens, temperature) go upstream, and
    // JSON.stringify of one nested some thousands of levels overflowed the stack, the runtime's 500)
    if (raw !== undefined && jsonTooDeep(raw) >= 0) {
      return failure(client, 400, `the request body nests deeper than ${JSON_MAX_DEPTH} levels`, 'invalid_request_error', 'ERR_BAD_REQUEST');
    }
    const body = raw === undefined ? undefined : parsed(raw);
    if (body === undefined) return failure(client, 400, 'the body is not JSON', 'invalid_request_error');
    if (!isObject(body) || !Array.isArray(body.messages) || !body.messages.every(isObject)) {
      return failure(client, 400, 'the body must be a JSON object whose messages are an array of objects', 'invalid_request_error');
    }
    // (the relay writes it into the client's events: a string, as SseRelay takes it)
    if (body.model !== undefined && typeof body.model !== 'string') return failure(client, 400, 'the model must be a string', 'invalid_request_error');
    // (a whole answer of the client's own API is the upstream's own, asked whole; any other, its stream)
    const streamed = body.stream === true;
    const redact = redactor(config.UPSTREAM_KEY);
    const headers = { 'content-type': 'application/json', accept: streamed || from !== client ? describeFormat(from).contentType : 'application/json' };
    if (from === 'anthropic') headers['anthropic-version'] = '2023-06-01';
    if (config.UPSTREAM_KEY) headers[from === 'anthropic' ? 'x-api-key' : 'authorization'] = from === 'anthropic' ? config.UPSTREAM_KEY : `Bearer ${config.UPSTREAM_KEY}`;
    // (the client's leaving aborts the upstream request: request.signal, which Deno aborts on the
    // client's leaving alone with --unstable-no-legacy-abort, as the other runtimes do; without it
    // Deno aborts it after every response delivered too, and warns wherever it is read)
    let upstream;
    try {
      upstream = await fetch(new URL(PATH[from], config.UPSTREAM), { method: 'POST', headers, body: JSON.stringify(upstreamBody(client, body, from, streamed || from !== client)), signal: request.signal });
    } catch {
      return failure(client, 502, 'the upstream cannot be reached');
    }
    if (!upstream.ok || upstream.body === null) {
      // (its body read up to ERROR_BODY_BYTES and its JSON object's end: an upstream's error body
      // of any size, or one that never ended, was read whole, and held the client as long)
      const error = describeFormat(from).errorOfBody(parsed(await readBody(upstream.body, ERROR_BODY_BYTES) ?? new Uint8Array(0)));
      // (the upstream's 4xx or 5xx is the client's; any other answer without a stream, a 204 or a
      // redirect not followed, is a bad gateway: a Response of a null-body status cannot be made)
      const status = upstream.status >= 400 ? upstream.status : 502;
      // (its message may say the key it was sent: taken out)
      const message = error?.message === undefined ? undefined : redact === null ? error.message : redact.text(error.message);
      return failure(client, status, message ?? `upstream answered HTTP ${upstream.status}`, error?.type);
    }
    // (a stream only when the client asks for one: without `stream`, OpenAI's and Anthropic's APIs
    // answer whole, and their clients read a whole answer; of the client's own API, the upstream's)
    if (!streamed) {
      const limit = answerLimit(config.MAX_ANSWER_BYTES);
      return from === client ? passWhole(upstream, client, limit, redact) : whole(upstream, from, client, body.model, limit, redact);
    }
    const relay = new SseRelayStream({ from, to: client, model: body.model });
    // (the upstream's error event, passed on or written anew, may say the key: taken out of each
    // chunk, the relay's output of a read, whole events)
    const events = redact === null ? upstream.body.pipeThrough(relay)
      : upstream.body.pipeThrough(relay).pipeThrough(new TransformStream({ transform: (chunk, c) => c.enqueue(redact.bytes(chunk)) }));
    return new Response(events, {
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' },
    });
  },
};
