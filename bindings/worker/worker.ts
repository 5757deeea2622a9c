// seam's Worker entry (`seam-stream/worker`, dist/worker.js): a module Worker that fetches a
// model's stream (or reads one transferred to it), decodes it with ModelStream or SseParser off the
// page's thread, and posts the committed text or the events in batches, then the report. The page
// talks to it with streamInWorker (bindings/worker-client.ts); the messages are in
// bindings/worker-protocol.ts. Started as
//   new Worker(new URL('seam-stream/worker', import.meta.url), { type: 'module' })
// (a bundler resolves the name; unbundled, give the URL of dist/worker.js).
import { ModelStream } from '../models/stream.js';
import { SseParser } from '../frames/sse.js';
import { type SseEvent } from '../frames/types.js';
import { ready } from '../core/wasm.js';
import type { FromWorker, ToWorker, WorkerErrorData, WorkerReport } from './protocol.js';

interface Scope {
  postMessage(message: FromWorker): void;
  addEventListener(type: 'message', listener: (e: MessageEvent<ToWorker>) => void): void;
}
const scope = globalThis as unknown as Scope;

/** An error as data a message can carry: its class's name, code, offset and text survive. */
function errorData(err: unknown, fallback: string): WorkerErrorData {
  const e = (err ?? {}) as Record<string, unknown>;
  const out: WorkerErrorData = {
    name: typeof e.name === 'string' ? e.name : 'Error',
    code: typeof e.code === 'string' ? e.code : fallback,
    message: typeof e.message === 'string' ? e.message : String(err),
  };
  if (typeof e.offset === 'number') out.offset = e.offset;
  if (typeof e.text === 'string') out.text = e.text;
  if (typeof e.providerMessage === 'string') out.providerMessage = e.providerMessage;
  if (typeof e.status === 'number') out.status = e.status;
  return out;
}

/** An error of the Worker's own making, with a code. */
const failure = (code: string, message: string, status?: number) => Object.assign(new Error(message), { code, status });

/** The decoder for a request: text from a model format, or events from SSE. */
interface Decoder {
  push(chunk: Uint8Array): void;
  end(): WorkerReport;
  /** True once the stream is complete (a model's completion): nothing after it is read. */
  readonly done: boolean;
}

const controllers = new Map<number, AbortController>();

async function run(msg: Extract<ToWorker, { type: 'start' }>): Promise<void> {
  const { id } = msg;
  const abort = new AbortController();
  controllers.set(id, abort);
  const interval = msg.interval ?? 16;
  let text = '';
  let events: SseEvent[] = [];
  let bytesIn = 0;
  let last = -Infinity;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const post = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (text === '' && events.length === 0) return;
    scope.postMessage({ type: 'part', id, text, events, bytesIn });
    text = '';
    events = [];
    last = performance.now();
  };
  // The first output goes at once; then at most one message per interval (or per 1 MiB of text).
  const queue = () => {
    const wait = last + interval - performance.now();
    if (wait <= 0 || text.length >= 1 << 20 || events.length >= 4096) post();
    else timer ??= setTimeout(post, wait);
  };

  let decoder: Decoder;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  try {
    await ready();
    decoder = msg.format === 'sse' ? sseDecoder(msg.options, (e) => { events.push(...e); }) : modelDecoder(msg, (t) => { text += t; });
    let body = msg.body;
    if (body === undefined) {
      if (msg.url === undefined) throw new TypeError('seam worker: a request needs a url or a body');
      let res: Response;
      try {
        res = await fetch(msg.url, { ...msg.init, signal: abort.signal });
      } catch (err) {
        if (abort.signal.aborted) throw err;
        throw Object.assign(failure('ERR_FETCH', `seam worker: fetch failed: ${(err as Error)?.message ?? String(err)}`), { cause: err });
      }
      if (!res.ok) await refuse(res, msg);
      if (res.body === null) throw failure('ERR_HTTP', `seam worker: the response to ${msg.url} has no body`, res.status);
      body = res.body;
    }
    reader = body.getReader();
    const r = reader;
    // A transferred body has no fetch to abort: cancelling its reader ends a pending read.
    abort.signal.addEventListener('abort', () => { r.cancel().catch(() => {}); });
    for (;;) {
      if (abort.signal.aborted) throw failure('ERR_ABORTED', 'seam worker: cancelled');
      const { done, value } = await reader.read();
      if (done) break;
      bytesIn += value.length;
      decoder.push(value);
      queue();
      if (decoder.done) {
        await reader.cancel().catch(() => {});
        break;
      }
    }
    if (abort.signal.aborted) throw failure('ERR_ABORTED', 'seam worker: cancelled');
    const report = decoder.end();
    post();
    scope.postMessage({ type: 'end', id, report: { ...report, bytesIn } });
  } catch (err) {
    post(); // what was committed before the error (an error's `text` was added by the decoder)
    const aborted = abort.signal.aborted;
    if (reader !== undefined) reader.cancel().catch(() => {});
    scope.postMessage({
      type: 'error', id,
      error: aborted ? errorData(failure('ERR_ABORTED', 'seam worker: cancelled'), 'ERR_ABORTED') : errorData(err, 'ERR_WORKER'),
    });
  } finally {
    controllers.delete(id);
  }
}

/** A response that is not ok: the provider's error (a JSON error body) when it sent one, else ERR_HTTP. */
async function refuse(res: Response, msg: Extract<ToWorker, { type: 'start' }>): Promise<never> {
  const body = new Uint8Array(await res.arrayBuffer()).subarray(0, 1 << 16);
  if (msg.format !== 'sse') {
    const m = new ModelStream({ eof: 'allow', ...(msg.options as object), format: msg.format });
    try {
      m.push(body);
      m.flush();
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_PROVIDER') throw Object.assign(err as Error, { status: res.status });
    }
  }
  const excerpt = new TextDecoder().decode(body.subarray(0, 200)).replace(/\s+/g, ' ').trim();
  throw failure('ERR_HTTP', `seam worker: HTTP ${res.status} ${res.statusText}${excerpt ? `: ${excerpt}` : ''}`, res.status);
}

function modelDecoder(msg: Extract<ToWorker, { type: 'start' }>, add: (text: string) => void): Decoder {
  const m = new ModelStream({ ...(msg.options as object), format: msg.format as ModelStream['format'] });
  const guard = (f: () => string) => {
    try {
      add(f());
    } catch (err) {
      const t = (err as { text?: unknown }).text;
      if (typeof t === 'string') add(t);
      throw err;
    }
  };
  return {
    push: (chunk) => guard(() => m.push(chunk)),
    end: () => {
      guard(() => m.flush());
      const { text: _, ...report } = m.finish();
      return report as WorkerReport;
    },
    get done() { return m.status === 'done'; },
  };
}

function sseDecoder(options: unknown, add: (events: SseEvent[]) => void): Decoder {
  const p = new SseParser(options as ConstructorParameters<typeof SseParser>[0]);
  let n = 0;
  const guard = (f: () => SseEvent[]) => {
    let out: SseEvent[];
    try {
      out = f();
    } catch (err) {
      const e = (err as { events?: unknown }).events;
      if (Array.isArray(e)) add(e as SseEvent[]);
      throw err;
    }
    n += out.length;
    add(out);
  };
  return {
    push: (chunk) => guard(() => p.push(chunk)),
    end: () => {
      guard(() => p.flush());
      return { status: p.truncated ? 'truncated' : 'done', events: n, lastEventId: p.lastEventId, retry: p.retry } as WorkerReport;
    },
    done: false,
  };
}

scope.addEventListener('message', (e) => {
  const msg = e.data;
  if (msg?.type === 'start') void run(msg);
  else if (msg?.type === 'cancel') controllers.get(msg.id)?.abort();
});
