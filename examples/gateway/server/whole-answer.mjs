// A stream's whole answer (`stream: false`): an upstream's of the client's own API passed through
// (passWhole), or another's read from its stream with seam's ModelStream and written anew in the
// client's API (assembleWhole, with the library's wholeAnswer: the answer's shape in each API).
import { CoreMemoryError, ModelPartReader, ModelStream, ModelStreamError, describeFormat, wholeAnswer } from 'seam-stream';
import { UpstreamProtocolError } from '../upstream.mjs';
import { HeldBody } from './budget.mjs';
import { jsonObjectEnd, readBody, startsWithBom } from './read-body.mjs';
import { anthropicBody, errorBody, sendJson } from './replies.mjs';

/** The whole answer (`stream: false`) of an upstream of the client's own API, passed through with its status, bounded. */
export async function passWhole(s, upRes) {
  const { gw } = s;
  const { o, m } = gw;
  let body;
  try {
    // (read to the end of its JSON object: an upstream can hold the connection open after it)
    body = await readBody(upRes, o.maxResponseBytes, false, (n) => { s.heard = gw.tick; return s.hold(n); }, jsonObjectEnd());
  } catch (err) {
    // the upstream's body broke off (cut short, malformed framing, its connection reset): a 502,
    // as a head that breaks HTTP/1.1 (not "could not be reached": it answered). It counts as a
    // stream's body that broke off does, and a whole answer read from one: truncated, and the
    // upstream's error of source "body".
    s.release();
    if (s.closed || s.left || s.expired) return;
    s.failed(err instanceof UpstreamProtocolError ? err : new UpstreamProtocolError(`the upstream's connection broke in its body: ${err?.message ?? err}`), 'body');
    s.status = 'truncated';
    m.truncated.inc();
    return;
  }
  s.release();
  // The answer, read once (the body is held whole here): a JSON object, or it is not passed on.
  let answer;
  // (a BOM at its start, which JSON.parse does not take, is no part of the answer, as seam's model
  // stream reads a whole answer: read past, and not passed on, as RFC 8259 asks of JSON sent)
  let bom = 0;
  if (Buffer.isBuffer(body)) {
    bom = startsWithBom(body) ? 3 : 0;
    try { answer = JSON.parse(body.toString('utf8', bom)); } catch { answer = undefined; }
    // its tokens, from the answer's usage, whether or not its client is still there to take it
    if (typeof answer === 'object' && answer !== null) m.tokens.add(gw.facts, answer.usage);
  }
  if (s.left || s.expired) return;
  if (body === null || body === false) {
    m.limitErrors.inc({ limit: body === null ? 'response_bytes' : 'pending_bytes' });
    s.status = 'limit';
    return body === null ? sendJson(s.res, 502, errorBody(`the upstream's answer is over ${o.maxResponseBytes} bytes`, 'upstream_error', 'ERR_RESPONSE_TOO_LARGE'))
      : sendJson(s.res, 503, errorBody(`the gateway's streams hold more than maxPendingBytes (${o.maxPendingBytes}) with this answer; retry later`, 'overloaded', 'ERR_PENDING_BYTES'), { 'retry-after': '1' });
  }
  m.bytesIn.inc(body.length);
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) {
    // (a page of a server at the upstream URL that is not the API, a proxy's: not passed on as the
    // answer; its kind and size go to the log)
    m.badEvents.inc();
    s.status = 'failed';
    gw.log(`gateway: request ${s.id}: 502: the upstream's answer (HTTP ${upRes.statusCode}, ${String(upRes.headers['content-type'] ?? 'no content type').slice(0, 100)}, ${body.length} bytes) is not a JSON object`);
    return sendJson(s.res, 502, errorBody(`the upstream's answer is not a JSON object (request id ${s.id}; the gateway's log has the detail)`, 'upstream_error', 'ERR_BAD_RESPONSE'));
  }
  body = body.subarray(bom);
  // (an error answered with a 200, as some servers and proxies answer: its message may say the gateway's key, taken out)
  if (gw.redact !== null && gw.facts.errorOfBody(answer) !== undefined) body = gw.redact.bytes(body);
  m.bytesOut.inc(body.length);
  s.status = 'done';
  s.res.writeHead(upRes.statusCode, { 'content-type': 'application/json', 'x-content-type-options': 'nosniff', 'content-length': body.length });
  s.res.end(body);
}

/**
 * The bytes a model stream keeps of `parts` (ModelPartReader's, of a read) besides the text: the
 * reasoning, a refusal, the arguments of the client's calls and the provider's own (their results
 * too), the sources cited. Counted as UTF-8 (a call's arguments said again in whole, `replaces`,
 * and a provider's call's result with each part of it, count again: a bound, not an exact sum).
 */
function partBytes(parts) {
  let n = 0;
  for (const p of parts) {
    if (p.type === 'reasoning' || p.type === 'refusal') n += Buffer.byteLength(p.text);
    else if (p.type === 'tool-call') n += Buffer.byteLength(p.delta);
    else if (p.type === 'server-tool-call') n += Buffer.byteLength(p.delta) + Buffer.byteLength(p.call.result ?? '');
    else if (p.type === 'citation') n += Buffer.byteLength(JSON.stringify(p.citation));
  }
  return n;
}

/**
 * Another upstream's stream read whole into one answer in the client's API (`stream: false`;
 * wholeAnswer), which names `model`.
 */
export async function assembleWhole(s, upRes, model) {
  const { gw } = s;
  const { o, m } = gw;
  // (the reasoning and the calls' arguments are part of the answer, and bounded as its text is:
  // the arguments were held up to the library's default, 16 MiB, whatever maxResponseBytes said;
  // media, Gemini's images and audio, are no part of it, and none is kept: they were held up to
  // the library's default, 64 MiB a stream, outside maxResponseBytes and the budget)
  const ms = new ModelStream({ format: gw.format, normalize: false, maxEventBytes: o.maxEventBytes, maxTextBytes: o.maxResponseBytes, maxReasoningBytes: o.maxResponseBytes,
    maxArgumentBytes: o.maxResponseBytes, maxMediaBytes: 0 });
  // (its tokens once, from the usage read, whatever ended it: the client's leaving, a failure, its answer)
  const dispose = () => {
    m.tokens.add(gw.facts, ms.usage);
    ms.dispose();
  };
  // (the reasoning, refusal and calls' arguments the model stream keeps, as each read adds to
  // them: held in the streams' budget as the text is, where they were outside it)
  const parts = new ModelPartReader(ms);
  const overBudget = () => Object.assign(new Error(`the gateway's streams hold more than maxPendingBytes (${o.maxPendingBytes}) with this answer; retry later`), { code: 'ERR_PENDING_BYTES' });
  let text = '';
  let failure = null;
  let broke = false; // the upstream's body broke off
  // (an answer that is one JSON body, which the model stream keeps whole until the upstream's end,
  // its jsonBodyBytes: held in the streams' budget as it comes, each read before the model stream
  // takes it, as the relay's is)
  const body = new HeldBody(s, ms);
  await new Promise((resolve) => {
    s.done = resolve;
    upRes.on('data', (chunk) => {
      if (failure) return;
      s.pinged = true;
      m.bytesIn.inc(chunk.length);
      try {
        const more = body.push(chunk);
        if (more === undefined) {
          failure = overBudget();
          upRes.destroy();
          return void resolve();
        }
        // (progress: the events that carried a part of the answer, not keep-alives nor empty
        // events, `{}` or an envelope alone, which an upstream could send for ever)
        s.progressed(ms.progressEvents);
        text += more;
        // (the text's UTF-8 bytes, as maxResponseBytes counts it and as it is written: its UTF-16
        // units were a third of a CJK text's bytes; and the reasoning and arguments the read added)
        if (!s.hold(Buffer.byteLength(more) + partBytes(parts.take()))) {
          failure = overBudget();
          upRes.destroy();
          resolve();
        } else if (ms.status === 'done' && !gw.facts.trailer) {
          // the upstream's completion, in a format that sends nothing after it: the answer is
          // whole, and the upstream connection is closed rather than waited on (one held open
          // after its completion had the answer lost to bodyTimeout, a 504), as a stream ends
          upRes.destroy();
          resolve();
        }
      } catch (err) { failure = err; upRes.destroy(); resolve(); }
    });
    upRes.on('end', resolve);
    upRes.on('error', () => { broke = true; resolve(); });
    upRes.on('close', resolve);
  });
  if (s.left || s.expired || s.res.destroyed) {
    s.release();
    return void dispose();
  }
  let answer;
  if (!failure) {
    try {
      // (what the end adds: the text held back, and all of an answer that was one JSON body, read
      // into its parts: they are held in place of its bytes)
      const last = ms.flush();
      text += last;
      if (!s.hold(Buffer.byteLength(last) + partBytes(parts.take()) - body.bytes)) failure = overBudget();
      else answer = whole(s.dialect, ms, text, model);
    } catch (err) { failure = err; }
  }
  s.release();
  m.eventsIn.inc(ms.events);
  if (failure && !(failure instanceof ModelStreamError) && !(failure instanceof CoreMemoryError) && failure.code === undefined) {
    // (what the model stream threw is not the stream's error, nor the gateway's reason: a RangeError
    // from the library where a whole answer nests too deep for JavaScript's stack; the gateway's
    // error, a 500 with the request id, its detail in the log, and not the exception's words)
    dispose();
    s.status = 'failed';
    throw failure;
  }
  if (failure) {
    const code = failure.code ?? 'ERR_GATEWAY';
    s.status = code === 'ERR_STREAM_TRUNCATED' ? 'truncated' : 'failed';
    if (code === 'ERR_STREAM_TRUNCATED') {
      m.truncated.inc();
      if (ms.finishReason !== undefined) m.finalMismatch.inc();
      if (broke) m.providerErrors.inc({ source: 'body' }); // (as for a streamed answer)
    }
    if (code === 'ERR_INVALID_UTF8') m.utf8Errors.inc();
    if (code === 'ERR_PROVIDER') m.providerErrors.inc({ source: 'stream' });
    if (code === 'ERR_BAD_EVENT') m.badEvents.inc();
    if (code === 'ERR_EVENT_TOO_LARGE' || code === 'ERR_TEXT_TOO_LONG' || code === 'ERR_REASONING_TOO_LONG' || code === 'ERR_ARGUMENTS_TOO_LARGE') { m.limitErrors.inc({ limit: 'response_bytes' }); s.status = 'limit'; }
    if (code === 'ERR_PENDING_BYTES') {
      m.limitErrors.inc({ limit: 'pending_bytes' });
      s.status = 'limit';
      dispose();
      return sendJson(s.res, 503, errorBody(failure.message, 'overloaded', code), { 'retry-after': '1' });
    }
    let message = failure instanceof ModelStreamError ? failure.providerMessage ?? failure.message : failure.message;
    if (gw.redact !== null) message = gw.redact.text(message);
    dispose();
    // The error as the relay's error event writes it in the client's format: with the
    // provider's own code for it (`provider_code`: `overloaded_error`, a failed turn's
    // `MALFORMED_FUNCTION_CALL`, …), and to Anthropic in the error type that code is in its words.
    const provider = failure instanceof ModelStreamError ? failure.providerCode : undefined;
    if (s.dialect === 'anthropic') {
      return sendJson(s.res, 502, anthropicBody(describeFormat(gw.format).anthropicErrorType(provider), message));
    }
    return sendJson(s.res, 502, errorBody(message, code === 'ERR_PROVIDER' ? 'upstream_error' : 'upstream_stream_error', code,
      failure instanceof ModelStreamError ? { offset: failure.offset, ...(provider !== undefined ? { provider_code: provider } : {}) } : undefined));
  }
  dispose();
  s.status = 'done';
  // (serialized once: an answer of several MiB was written to JSON twice, and copied once more, to count its bytes)
  m.bytesOut.inc(sendJson(s.res, 200, answer));
}

/**
 * A stream read whole (ModelStream, flushed) as one answer in the client's API: the library's
 * wholeAnswer (what SseRelay's stream of the same upstream carries, as the official clients read it:
 * test/gateway/whole-answers.test.ts), with the gateway's ids (`chatcmpl-gw…`, `msg_gw…`, and
 * `call_gw…` / `toolu_gw…` for a call the provider sent no id for). A call whose arguments are not
 * one JSON value is a 502 rather than an answer the client cannot use (ERR_BAD_ARGUMENTS).
 */
function whole(dialect, ms, text, model) {
  const t = Date.now().toString(36);
  const prefix = dialect === 'anthropic' ? 'toolu_gw' : 'call_gw';
  return wholeAnswer(ms, text, {
    to: dialect, model, id: dialect === 'anthropic' ? `msg_gw${t}` : `chatcmpl-gw${t}`, callId: (c) => `${prefix}${t}_${c.index}`,
  });
}
