// A stream's answer relayed as it comes (relayAnswer): the upstream's reads through seam's SseRelay
// to the client, whole validated events in the client's API, with backpressure and the stream's
// counts; and how a relayed stream counts once the relay has written its end (relayedStatus).
import { CoreMemoryError, SseRelay } from 'seam-stream';
import { HeldBody } from './budget.mjs';
import { clientGone } from './replies.mjs';

/**
 * How a relayed stream counts once the relay has written its end (`flush()` at the upstream's end,
 * or `abort()` for a reason of the gateway's own): by the relay's status and the error it wrote to
 * the client, if any, whose counter goes up here. `own`: the status when the relay wrote no error
 * and the upstream had not completed (`failed` at the upstream's end; `limit` for the gateway's
 * reason: a timeout, its memory).
 */
export function relayedStatus(relay, m, own) {
  const st = relay.status;
  const code = relay.error?.code; // the error the relay wrote to the client, if any
  if (code === 'ERR_INVALID_UTF8') m.utf8Errors.inc();
  else if (code === 'ERR_PROVIDER') m.providerErrors.inc({ source: 'stream' });
  else if (code === 'ERR_BAD_EVENT') m.badEvents.inc();
  else if (code === 'ERR_EVENT_TOO_LARGE') {
    m.limitErrors.inc({ limit: 'event_bytes' });
    return 'limit';
  } else if (code === 'ERR_REASONING_TOO_LONG') { // (the sources it keeps until the completion, past maxResponseBytes)
    m.limitErrors.inc({ limit: 'response_bytes' });
    return 'limit';
  }
  return st === 'done' ? 'done' : st === 'truncated' ? 'truncated' : code !== undefined ? 'failed' : own;
}

/** The client's error event for the gateway's `reason` (SseRelay.abort's), in its format (`to`), written by a relay of its own. */
function errorEvent(from, to, reason) {
  const r = new SseRelay({ from, to });
  try {
    return Buffer.from(r.abort(reason));
  } finally {
    r.dispose();
  }
}

/**
 * The relay threw what is not the stream's own error (a RangeError from the library where a whole
 * answer nests too deep for JavaScript's stack): the gateway's error, its detail in the log under
 * the request id, and the client's error event, never a completion.
 */
function relayFailed(s, relay, upRes, stop, err) {
  s.gw.m.gatewayErrors.inc();
  s.gw.log(`gateway: request ${s.id}: the relay failed: ${err?.stack ?? err}`);
  endOwn(s, relay, upRes, stop, { message: `gateway error (request id ${s.id}; the gateway's log has the detail)`, kind: 'server', code: 'ERR_GATEWAY' });
}

/**
 * The gateway ends the relayed stream `s` itself: the client's error event for `reason` after what
 * was relayed (SseRelay.abort), the upstream closed, the relay stopped (`stop`). `limit`: for want
 * of memory (the budget's, pending_bytes; the core's, core_memory), counted as that limit; else
 * the gateway's failure.
 */
function endOwn(s, relay, upRes, stop, reason, limit = undefined) {
  const { gw, res } = s;
  const { m } = gw;
  if (limit !== undefined) m.limitErrors.inc({ limit });
  let e = Buffer.from(relay.abort(reason));
  // (a relay whose flush threw has ended, and writes nothing more: the event written by a relay of its own)
  if (e.length === 0 && relay.status !== 'done') e = errorEvent(gw.format, s.dialect, reason);
  else if (gw.redact !== null && relay.error !== undefined) e = gw.redact.bytes(e); // (the upstream's own error, written instead)
  m.eventsOut.inc(1);
  m.bytesOut.inc(e.length);
  s.status = relayedStatus(relay, m, limit !== undefined ? 'limit' : 'failed');
  if (!res.destroyed) {
    res.end(e);
    s.wroteNow();
  }
  upRes.destroy();
  stop();
}

/**
 * The relay loop of the stream `s`: upstream reads → whole validated events → client, with
 * backpressure. A translated stream names `model` (the client's), as the whole answer does;
 * without it, the upstream's format. Resolves when the stream has ended.
 */
export function relayAnswer(s, upRes, model) {
  const { gw, res } = s;
  const { o, m } = gw;
  // (the sources the answer cites, which a relay to OpenAI's clients from another format keeps
  // until the completion to write them as its annotations, are bounded as a whole answer's parts
  // are: they were held up to the library's default, 64 MiB a stream, whatever maxResponseBytes said)
  const relay = new SseRelay({ from: gw.format, to: s.dialect, maxEventBytes: o.maxEventBytes, maxReasoningBytes: o.maxResponseBytes, model });
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', 'x-content-type-options': 'nosniff' });
  res.flushHeaders();
  s.beat = gw.tick;
  return new Promise((resolve) => {
    let ended = false;
    let broke = false; // the upstream's body broke off (its connection closed or reset, or its framing broke)
    let events = 0;
    let sent = 0; // events written to the client, as the relay counts them
    s.relaying = relay;
    const stop = () => {
      ended = true;
      s.relaying = null;
      // (its tokens once, from the usage the relay read, whatever ended the stream)
      m.tokens.add(gw.facts, relay.usage);
      relay.dispose();
      s.release(); // (the JSON body it kept, if any)
      resolve();
    };
    /** The upstream's end: the relay's last bytes ([DONE], or the error event), then the response's end. */
    const end = () => {
      take(); // the reads of this tick first
      if (ended) return;
      if (clientGone(res)) return void s.abort();
      let tail;
      try {
        tail = Buffer.from(relay.flush()); // a copy: the view is the relay's
      } catch (err) {
        return void relayFailed(s, relay, upRes, stop, err);
      }
      // (the upstream's error event, whose message may say the gateway's key: taken out)
      if (gw.redact !== null && relay.error !== undefined) tail = gw.redact.bytes(tail);
      s.status = relayedStatus(relay, m, 'failed');
      if (relay.status === 'truncated') {
        m.truncated.inc();
        if (relay.finishReason !== undefined) m.finalMismatch.inc();
        // (a body that broke off is also the upstream's error, as it is for a whole answer; one
        // that ended whole, its stream without its completion, is the truncation alone)
        if (broke) m.providerErrors.inc({ source: 'body' });
      }
      m.eventsIn.inc(relay.events - events);
      m.eventsOut.inc(relay.eventsOut - sent);
      m.bytesOut.inc(tail.length);
      if (!res.destroyed) {
        res.end(tail);
        s.wroteNow();
      }
      stop();
    };
    s.done = () => { if (!ended) stop(); };
    // (an answer that is one JSON body, which the relay keeps whole until the upstream's end, in
    // JavaScript, outside the core's memory: held in the streams' budget as it comes, each read
    // before the relay takes it, and let go with the relay)
    const body = new HeldBody(s, relay);
    // One socket read of the upstream holds many HTTP chunks when the upstream is ahead of the
    // gateway (each a 'data' event, in one go): the reads of one tick are relayed as one push
    // and written as one client write, right after the last of them (process.nextTick, which
    // runs before the response's own 'end').
    const burst = [];
    let burstBytes = 0;
    const take = () => {
      if (burst.length === 0 || ended) return;
      if (clientGone(res)) {
        burst.length = 0;
        return void s.abort();
      }
      const chunk = burst.length === 1 ? burst[0] : Buffer.concat(burst, burstBytes);
      burst.length = 0;
      burstBytes = 0;
      let out;
      try {
        out = body.push(chunk);
      } catch (err) {
        // the core's budget for all streams (setCoreMemoryLimit): this stream stops, the others go on
        if (err instanceof CoreMemoryError) return void endOwn(s, relay, upRes, stop, { message: `the gateway is out of stream memory: ${err.message}`, kind: 'overloaded', code: err.code }, 'core_memory');
        return void relayFailed(s, relay, upRes, stop, err);
      }
      m.bytesIn.inc(chunk.length);
      // (a JSON body that would pass the budget with this read: refused before the relay keeps it)
      if (out === undefined) return void endOwn(s, relay, upRes, stop, { message: `the gateway's streams hold more than maxPendingBytes (${o.maxPendingBytes}) with this answer; retry later`, kind: 'overloaded', code: 'ERR_PENDING_BYTES' }, 'pending_bytes');
      const n = relay.events;
      m.eventsIn.inc(n - events);
      // (progress: the events that carried a part of the answer, not keep-alives nor empty events,
      // `{}` or an envelope alone, which an upstream could send for ever)
      s.progressed(relay.progressEvents);
      if (out.length !== 0) {
        // From OpenAI, a read of whole canonical events comes back as the read itself, or its
        // start before a [DONE] (the relay compares them): memory of the read (its buffer),
        // written as it is; anything else is the relay's reused view, copied.
        const bytes = out.buffer === chunk.buffer ? out : Buffer.from(out);
        m.bytesOut.inc(bytes.length);
        m.eventsOut.inc(relay.eventsOut - sent);
        sent = relay.eventsOut;
        s.beat = gw.tick; // (the client had bytes: its keep-alive waits a period from here)
        if (!res.write(bytes)) {
          upRes.pause();
          s.paused = true;
          gw.budget.paused++;
          res.once('drain', () => {
            s.unpaused();
            upRes.resume();
          });
        }
      }
      events = n;
      const p = s.wroteNow() + relay.retainedBytes;
      if (p > s.peak) s.peak = p;
      // The relay failed (the upstream's error event, a bad event, invalid UTF-8, an event past
      // maxEventBytes): it reads nothing more, and holds its error event for flush(). The stream
      // ends now: the client gets that error at once, and the upstream connection is closed
      // rather than read to its end (or to bodyTimeout) for nothing, its slot held meanwhile.
      // The relay wrote the client's end at the upstream's completion (every format but Bedrock's
      // ConverseStream, whose usage follows its stop): the answer is whole and nothing after it is
      // the answer, so the response ends now, rather than when the upstream's body ends, and the
      // upstream connection (one a request) is closed.
      if (relay.status === 'failed' || relay.endWritten) {
        end();
        upRes.destroy();
      }
    };
    upRes.on('data', (chunk) => {
      s.pinged = true;
      if (burst.length === 0) process.nextTick(take);
      burst.push(chunk);
      burstBytes += chunk.length;
    });
    upRes.on('end', end);
    // The upstream's connection broke: the relay's flush calls it truncated (unless it had
    // completed), at the byte offset where the body broke off. (SseRelayStream, which cannot
    // tell an upstream's error from its client's leaving, writes its abort there: a
    // `server_error` without an offset. Here the client's leaving is an event of its own.)
    upRes.on('error', () => { broke = true; end(); });
    upRes.on('close', end);
  });
}
