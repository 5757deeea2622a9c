// Layer 4 as Web TransformStreams, for fetch handlers (a Worker, a Deno or Bun server, a Next.js
// route, a Hono app): `new Response(upstream.body.pipeThrough(new SseRelayStream({ from: 'anthropic' })))`
// relays in one line, and `ModelTextStream` gives a stream's committed text.
import { CoreMemoryError } from '../core/errors.js';
import { Transform, failed, owning, textOn } from '../core/transform.js';
import { SseRelay, type SseRelayOptions } from './relay.js';
import { ModelStream, type ModelReport, type ModelStreamOptions } from './stream.js';

/**
 * The upstream's bytes in, the client's SSE bytes out, through an {@link SseRelay}: whole, validated
 * events in the client's format (`to`, OpenAI Chat Completions by default), its completion only
 * after the upstream's, and at the end of an upstream without one an error event in the client's
 * shape, never a completion. Each chunk out is the relay's output of one read, copied (or the read
 * itself where the relay passes it through). An upstream body that errors (the connection drops)
 * errors this stream with the same reason: the client's response is cut, with no completion. A
 * read the core cannot hold (`CoreMemoryError`: the budget of `setCoreMemoryLimit`) ends the
 * stream: the client gets an error event (`overloaded`, `overloaded_error`) and the stream's end,
 * and the upstream is cancelled; `relay.status` is `failed`.
 */
export class SseRelayStream extends Transform<Uint8Array, Uint8Array> {
  /** The relay behind the stream: `textBytes`, `eventsOut`, `error`, `status`, `usage`. */
  readonly relay: SseRelay;

  constructor(options: SseRelayOptions) {
    const relay = new SseRelay(options);
    // The relay's output is a view of its buffer, valid until its next call: what is enqueued must
    // outlive that (the chunk it was given, or a view of it, already does).
    const own = (out: Uint8Array, chunk: Uint8Array | null): Uint8Array =>
      chunk !== null && out.buffer === chunk.buffer ? out : out.slice();
    super(owning({
      transform(chunk, controller) {
        let out: Uint8Array;
        try {
          out = relay.push(chunk);
        } catch (err) {
          if (!(err instanceof CoreMemoryError)) throw err;
          // The core could not hold this stream (its budget, setCoreMemoryLimit, or its 4 GiB): the
          // client gets the error event in its format and the stream's end, the upstream is
          // cancelled, and the other streams go on. (Erroring the stream would drop the event.)
          const end = relay.flush();
          if (end.length !== 0) controller.enqueue(end.slice());
          controller.terminate();
          return;
        }
        if (out.length !== 0) controller.enqueue(own(out, chunk));
      },
      flush(controller) {
        const out = relay.flush();
        if (out.length !== 0) controller.enqueue(own(out, null));
      },
    }, () => relay.dispose()));
    this.relay = relay;
  }
}

/**
 * A model stream's bytes in, its committed text out (whole graphemes, NFC, as
 * {@link ModelStream.push} returns it; options as `ModelStream`'s), one string per read that
 * commits text. At the end `report` resolves with {@link ModelStream.finish}'s report. A
 * `ModelStreamError` (the provider's error, a bad event, a truncated stream unless `eof: 'allow'`)
 * errors the stream after the text committed before it is enqueued, and `report` rejects with it.
 */
export class ModelTextStream extends Transform<Uint8Array, string> {
  /** The stream behind it: `status`, `toolCalls`, `reasoning`, `usage` as they grow. */
  readonly model: ModelStream;
  /** The report, at the end of the stream; rejects with the error that stopped it. */
  readonly report: Promise<ModelReport>;

  constructor(options: ModelStreamOptions) {
    const model = new ModelStream(options);
    let settle!: { resolve(r: ModelReport): void; reject(e: unknown): void };
    const report = new Promise<ModelReport>((resolve, reject) => { settle = { resolve, reject }; });
    report.catch(() => {}); // (the stream's reader sees the error too: not an unhandled rejection)
    const fail = (controller: TransformStreamDefaultController<string>, err: unknown) => {
      settle.reject(err);
      return failed(controller, err, textOn(err));
    };
    super(owning({
      transform(chunk, controller) {
        let text: string;
        try { text = model.push(chunk); } catch (err) { return fail(controller, err); }
        if (text !== '') controller.enqueue(text);
      },
      flush(controller) {
        let text: string;
        try { text = model.flush(); } catch (err) { return fail(controller, err); }
        if (text !== '') controller.enqueue(text);
        settle.resolve(model.finish());
      },
      // (where the runtime calls it: the readable side cancelled, or the writable side aborted)
      cancel(reason: unknown) { settle.reject(reason); },
    }, () => model.dispose()));
    this.model = model;
    this.report = report;
  }
}
