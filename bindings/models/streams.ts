// Layer 4 as Web TransformStreams, for fetch handlers (a Worker, a Deno or Bun server, a Next.js
// route, a Hono app): `new Response(upstream.body.pipeThrough(new SseRelayStream({ from: 'anthropic' })))`
// relays in one line, `ModelTextStream` gives a stream's committed text, and `ModelPartStream` all it
// says (reasoning, text, tool calls, citations) as parts.
import { CoreMemoryError } from '../core/errors.js';
import { type ByteChunk, Transform, chunkBytes, drained, failed, owning, textOn } from '../core/transform.js';
import { SseRelay, type SseRelayOptions } from './relay.js';
import { type ModelPart, ModelPartReader } from './parts.js';
import { ModelStream, type ModelReport, type ModelStreamOptions } from './stream.js';
import type { RelayAbort } from './writer.js';

/** What the client is told when the upstream's body errors before its completion (`SseRelay.abort`'s reason). */
const UPSTREAM_BROKE: RelayAbort = {
  message: 'the upstream connection broke before the stream\'s completion: the answer is cut short', kind: 'server', code: 'ERR_STREAM_TRUNCATED',
};

/**
 * The upstream's bytes in, the client's SSE bytes out, through an {@link SseRelay}: whole, validated
 * events in the client's format (`to`, OpenAI Chat Completions by default), its completion only
 * after the upstream's, and at the end of an upstream without one an error event in the client's
 * shape, never a completion. Each chunk out is the relay's output of one read, copied (or the read
 * itself where the relay passes it through, as a Uint8Array when it was another view).
 *
 * An upstream body that errors (the connection drops; `pipeThrough` aborts this stream's writable
 * side with its error) ends the client's stream with the relay's {@link SseRelay.abort}: an error
 * event in the client's format (`server_error`, `api_error`; code `ERR_STREAM_TRUNCATED`), the
 * upstream's own error if the relay had read one and not written it yet, or the client's
 * completion if the upstream had sent its own before it dropped. The client's stream then ends
 * normally rather than being cut, so that its client reads the error in its own format. The
 * relay is `failed` (or `done`), and the upstream's error is {@link SseRelayStream.upstreamError}.
 * The pipe (the writable side's abort) settles once the client has read that end. (The same in the
 * browsers, which do not call a transformer's `cancel`: see `Transform`. With
 * `pipeThrough(…, { preventAbort: true })` nothing reaches the relay, and the stream waits for its
 * writable side to be closed or aborted.)
 *
 * A read the core cannot hold (`CoreMemoryError`: the budget of `setCoreMemoryLimit`) ends the
 * stream: the client gets an error event (`overloaded`, `overloaded_error`) and the stream's end,
 * and the upstream is cancelled; `relay.status` is `failed`. So does a read that fails the relay
 * (the upstream's error event, a bad event, a limit): its error event is written at once, rather
 * than when the upstream ends.
 */
export class SseRelayStream extends Transform<ArrayBufferLike | ArrayBufferView, Uint8Array> {
  /** The relay behind the stream: `textBytes`, `eventsOut`, `error`, `status`, `usage`. */
  readonly relay: SseRelay;
  #upstreamError: unknown = undefined;

  /** What the upstream body errored with, when it did (the relay wrote its end for it); else `undefined` (as for a body that errored with `undefined`). */
  get upstreamError(): unknown {
    return this.#upstreamError;
  }

  constructor(options: SseRelayOptions) {
    const relay = new SseRelay(options);
    let ctl: TransformStreamDefaultController<Uint8Array> | null = null;
    let self: SseRelayStream | null = null;
    // The relay's output is a view of its buffer, valid until its next call: what is enqueued must
    // outlive that (the chunk it was given, or a view of its start, already does; a view elsewhere
    // in the same ArrayBuffer is the relay's own, where the chunk is another relay's view: their
    // first buffers share one).
    const own = (out: Uint8Array, chunk: Uint8Array | null): Uint8Array =>
      chunk !== null && out.buffer === chunk.buffer && out.byteOffset === chunk.byteOffset ? out : out.slice();
    /** The relay's last bytes `out` to the client, then the client's stream ends (a closed one throws). */
    const endWith = (controller: TransformStreamDefaultController<Uint8Array>, out: Uint8Array): void => {
      if (out.length !== 0) controller.enqueue(own(out, null));
      controller.terminate();
    };
    super(owning({
      start(controller) {
        ctl = controller;
      },
      transform(written, controller) {
        const chunk = chunkBytes(written);
        let out: Uint8Array;
        try {
          out = relay.push(chunk);
        } catch (err) {
          if (!(err instanceof CoreMemoryError)) throw err;
          // The core could not hold this stream (its budget, setCoreMemoryLimit, or its 4 GiB): the
          // client gets the error event in its format and the stream's end, the upstream is
          // cancelled, and the other streams go on. (Erroring the stream would drop the event.)
          endWith(controller, relay.flush());
          return;
        }
        if (out.length !== 0) controller.enqueue(own(out, chunk));
        // The relay failed (the upstream's error event, a bad event, a limit), or wrote the client's
        // end at the upstream's completion: nothing the upstream sends now reaches the client, so
        // the client's stream ends now (after the error event, or the end) and the upstream is
        // cancelled, rather than both waiting for the upstream's body to end (one that stays open
        // would hold the client, and be read for nothing).
        if (relay.status === 'failed' || relay.endWritten) endWith(controller, relay.flush());
      },
      flush(controller) {
        const out = relay.flush();
        if (out.length !== 0) controller.enqueue(own(out, null));
      },
      // The writable side aborted (the upstream body errored) or the readable side cancelled (the
      // client left; the two cannot be told apart here, and the relay's abort leaves a relay whose
      // client left failed, as its dispose would, or done; it has the upstream's error if it had
      // read one). With a client still reading, the relay's end is written and the stream ends;
      // the promise waits until the client has read it: the runtime errors the readable side after
      // the promise settles, which drops what is queued unless the stream has closed by then.
      cancel(reason) {
        if (ctl === null) return;
        const out = relay.abort(UPSTREAM_BROKE);
        try {
          endWith(ctl, out);
        } catch {
          return; // the client left: nothing to write to
        }
        if (self !== null) self.#upstreamError = reason;
        return drained(ctl);
      },
    }, () => relay.dispose()));
    this.relay = relay;
    self = this;
  }
}

/**
 * A model stream's bytes in, its committed text out (whole graphemes, NFC, as
 * {@link ModelStream.push} returns it; options as `ModelStream`'s), one string per read that
 * commits text. At the end `report` resolves with {@link ModelStream.finish}'s report. A
 * `ModelStreamError` (the provider's error, a bad event, a truncated stream unless `eof: 'allow'`)
 * errors the stream after the text committed before it is enqueued, and `report` rejects with it.
 *
 * An upstream body that errors (`pipeThrough` aborts the writable side with its error) errors the
 * stream with that error after the text it had enqueued, and `report` rejects with it (or with the
 * provider's error of a turn that had failed, which came first). Once the stream had completed
 * (Bedrock's `metadata`, with the usage, follows its `messageStop`), the text was whole: `report`
 * resolves with the report of what was read, and the upstream's error still follows the text (the
 * readable side cannot be ended there without making a reader's cancel reject; a
 * {@link ModelPartStream} ends with its `finish` part instead).
 */
export class ModelTextStream extends Transform<ArrayBufferLike | ArrayBufferView, string> {
  /** The stream behind it: `status`, `toolCalls`, `reasoning`, `usage` as they grow. */
  readonly model: ModelStream;
  /** The report, at the end of the stream; rejects with the error that stopped it. */
  readonly report: Promise<ModelReport>;

  constructor(options: ModelStreamOptions) {
    const model = new ModelStream(options);
    const { transformer, report } = overModel<string>(model, {
      read: (text, c) => { if (text !== '') c.enqueue(text); },
      carried: textOn,
    });
    super(transformer);
    this.model = model;
    this.report = report;
  }
}

/**
 * A model stream's bytes in, its parts out, in the order each read brought them (options as
 * `ModelStream`'s): `reasoning` (text as sent, with its block), `text` (committed, as
 * {@link ModelStream.push} returns it), `refusal`, `tool-call` (a client call begun, grown or ended:
 * the call as it stands and the arguments the read added), `citation`, and at the end `finish`
 * with {@link ModelStream.finish}'s report, which `report` resolves with too. What an app renders
 * from a stream (the reasoning apart, the calls as they grow) in one pipe:
 * `for await (const part of readChunks(body.pipeThrough(new ModelPartStream({ format }))))`.
 * A read that holds more than one event (a reader that fell behind, reads that the network
 * joined) is read an event at a time ({@link ModelPartReader}): the parts come in the order the
 * events said them, the same however the stream is cut, and each kind joined is the report's: its
 * text, reasoning, refusal, calls and citations. Errors, a break of the upstream and a reader that leaves end it as
 * they end {@link ModelTextStream}: the parts before the error (the text it carries among them),
 * then the error.
 */
export class ModelPartStream extends Transform<ArrayBufferLike | ArrayBufferView, ModelPart> {
  /** The stream behind it. */
  readonly model: ModelStream;
  /** The report, at the end of the stream (the `finish` part's); rejects with the error that stopped it. */
  readonly report: Promise<ModelReport>;

  constructor(options: ModelStreamOptions) {
    const model = new ModelStream(options);
    const parts = new ModelPartReader(model);
    const { transformer, report } = overModel<ModelPart>(model, {
      // (a read of several events gives their parts in their order)
      push: (chunk) => parts.push(chunk),
      read: (text, c) => { for (const p of parts.take(text)) c.enqueue(p); },
      carried: (err) => parts.take(textOn(err)[0] ?? ''),
      end: (r, c) => { c.enqueue({ type: 'finish', report: r }); },
    });
    super(transformer);
    this.model = model;
    this.report = report;
  }
}

/** What a stream over a ModelStream makes of its reads: what a read (or the end) gave, what an error carries, and its end. */
interface ModelOut<O> {
  /** A read pushed into the model, and what it gave (else the model's push, then `read`). */
  push?(chunk: Uint8Array): O[];
  read(text: string, controller: TransformStreamDefaultController<O>): void;
  carried(err: unknown): O[];
  end?(report: ModelReport, controller: TransformStreamDefaultController<O>): void;
}

/**
 * The transformer of a stream over `model`, and its report. An error of a push or of the flush
 * errors the stream after what it carries was enqueued, and rejects the report. The runtime's
 * cancel (the readable side cancelled, or the writable side aborted, which cannot be told apart
 * here): what was enqueued is left for the reader to take first (the runtime then errors the
 * readable side, which would drop it); a turn that failed and waited for its usage ends the stream
 * with its error, which came first; after the stream's completion its text is whole (nothing is
 * held past it) and the report, of what was read (Bedrock's usage unless its metadata came before
 * the break), resolves; a stream with an end of its own (the parts' `finish`) then ends as it would
 * at its end, as SseRelayStream writes the client's completion (a stream with none cannot end its
 * readable side here without making a reader's cancel reject: the upstream's error follows its
 * text); otherwise the report rejects with the reason.
 */
function overModel<O>(model: ModelStream, out: ModelOut<O>): { transformer: Transformer<ByteChunk, O>; report: Promise<ModelReport> } {
  let settle!: { resolve(r: ModelReport): void; reject(e: unknown): void };
  const report = new Promise<ModelReport>((resolve, reject) => { settle = { resolve, reject }; });
  report.catch(() => {}); // (the stream's reader sees the error too: not an unhandled rejection)
  const fail = (controller: TransformStreamDefaultController<O>, err: unknown) => {
    settle.reject(err);
    return failed(controller, err, out.carried(err));
  };
  /** The report at the end, which resolves `report` (or rejects it, and throws, when it cannot be made). */
  const finished = (): ModelReport => {
    let r: ModelReport;
    try {
      r = model.finish();
    } catch (err) {
      settle.reject(err);
      throw err;
    }
    settle.resolve(r);
    return r;
  };
  let ctl: TransformStreamDefaultController<O> | null = null;
  // (a write held back by the reader when the stream was cancelled is not read: where seam's own
  // sides stand in front, it reaches the transformer after the cancel, as the runtime's would not)
  let cancelled = false;
  const transformer = owning<ByteChunk, O>({
    start(controller) {
      ctl = controller;
    },
    transform(written, controller) {
      if (cancelled) return;
      const chunk = chunkBytes(written);
      if (out.push !== undefined) {
        let gave: O[];
        try { gave = out.push(chunk); } catch (err) { return fail(controller, err); }
        for (const x of gave) controller.enqueue(x);
        return;
      }
      let text: string;
      try { text = model.push(chunk); } catch (err) { return fail(controller, err); }
      out.read(text, controller);
    },
    flush(controller) {
      let text: string;
      try { text = model.flush(); } catch (err) { return fail(controller, err); }
      out.read(text, controller);
      const r = finished();
      out.end?.(r, controller);
    },
    cancel(reason: unknown) {
      cancelled = true;
      const turn = model.turnError();
      const c = ctl;
      if (turn === null && model.status === 'done') {
        const r = finished();
        if (c === null) return;
        if (out.end !== undefined) {
          try {
            out.end(r, c);
            c.terminate();
          } catch {
            return; // (the reader left: nothing to end)
          }
        }
        return drained(c);
      }
      settle.reject(turn ?? reason);
      if (c === null) {
        if (turn !== null) throw turn;
        return;
      }
      return turn === null ? drained(c) : drained(c).then(() => { throw turn; });
    },
  }, () => model.dispose());
  return { transformer, report };
}
