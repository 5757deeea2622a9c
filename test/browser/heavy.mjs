// Runs in the browser page (plain JS, served as is): a large model stream decoded on the page's
// thread and in seam's Worker, with the long tasks of the page's thread counted meanwhile.

/** Counts the page's long tasks (over 50 ms) from now until `stop()`. */
function longTasks() {
  const seen = [];
  // (Firefox observes no 'longtask' entries: `supported` says whether the count means anything)
  const supported = PerformanceObserver.supportedEntryTypes.includes('longtask');
  const po = new PerformanceObserver((list) => { for (const e of list.getEntries()) seen.push(e.duration); });
  if (supported) po.observe({ type: 'longtask' });
  return () => {
    if (supported) for (const e of po.takeRecords()) seen.push(e.duration);
    po.disconnect();
    return { count: seen.length, max: Math.round(Math.max(0, ...seen)), supported };
  };
}

/** Frames drawn until `stop()`: the page's responsiveness while the stream is read. */
function frames() {
  let n = 0;
  let on = true;
  const tick = () => { n++; if (on) requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
  const t0 = performance.now();
  return () => { on = false; return Math.round((n * 1000) / (performance.now() - t0)); };
}

/** Settles the page's observers (a task boundary) before a measurement starts. */
const idle = () => new Promise((r) => setTimeout(r, 100));

async function sha256Hex(text) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

const pick = (r) => ({
  status: r.status, finishReason: r.finishReason, usage: r.usage, events: r.events, utf8Bytes: r.utf8Bytes,
  codePoints: r.codePoints, utf16Units: r.utf16Units, graphemes: r.graphemes, normalizationChanged: r.normalizationChanged,
  sha256: r.sha256,
});

/** ModelStream on the page's thread, in a reader loop over fetch's body. */
export async function onPage(url) {
  const m = await import('/dist/index.js');
  await idle();
  const stop = longTasks();
  const fps = frames();
  const t0 = performance.now();
  const stream = new m.ModelStream({ format: 'openai' });
  const reader = (await fetch(url)).body.getReader();
  let text = '';
  let reads = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    reads++;
    text += stream.push(value);
  }
  text += stream.flush();
  const ms = Math.round(performance.now() - t0);
  const report = stream.finish();
  const tasks = stop();
  return { report: pick(report), textLength: text.length, same: report.text === text, ms, reads, longTasks: tasks, fps: fps() };
}

/** The same stream in seam's Worker: the page only joins the parts it posts. */
export async function inWorker(url) {
  const m = await import('/dist/index.js');
  const worker = new Worker('/dist/worker.js', { type: 'module' });
  await idle();
  const stop = longTasks();
  const fps = frames();
  const t0 = performance.now();
  const run = m.streamInWorker(worker, { url, format: 'openai' });
  const parts = [];
  let messages = 0;
  for await (const part of run) {
    messages++;
    parts.push(part.text);
  }
  const report = await run.report;
  const ms = Math.round(performance.now() - t0);
  const tasks = stop();
  const rate = fps();
  worker.terminate();
  const text = parts.join('');
  return { report: pick(report), bytesIn: report.bytesIn, textLength: text.length, textSha256: await sha256Hex(text), ms, messages, longTasks: tasks, fps: rate };
}

/** Errors and cancellation through the Worker. */
export async function workerErrors(base) {
  const m = await import('/dist/index.js');
  const worker = new Worker('/dist/worker.js', { type: 'module' });
  const caught = async (run) => {
    const texts = [];
    try {
      for await (const p of run) texts.push(p.text);
      return { ok: true, text: texts.join('') };
    } catch (e) {
      return {
        text: texts.join(''), cls: e instanceof m.ModelStreamError ? 'ModelStreamError' : e instanceof m.WorkerStreamError ? 'WorkerStreamError' : e?.constructor?.name,
        code: e.code, offset: e.offset, status: e.status, message: e.message, providerMessage: e.providerMessage,
      };
    }
  };
  const truncated = await caught(m.streamInWorker(worker, { url: `${base}/small?cut=1`, format: 'openai' }));
  const provider = await caught(m.streamInWorker(worker, { url: `${base}/error-body`, format: 'openai' }));
  const http = await caught(m.streamInWorker(worker, { url: `${base}/missing`, format: 'openai' }));
  // a transferred body, as events
  const body = (await fetch(`${base}/small`)).body;
  const sse = m.streamInWorker(worker, { body, format: 'sse' });
  const events = [];
  for await (const p of sse) events.push(...p.events);
  const sseReport = await sse.report;
  // cancel a stream that never ends
  const hanging = m.streamInWorker(worker, { url: `${base}/hang`, format: 'openai' });
  const first = await hanging.next();
  hanging.cancel();
  const cancelled = await caught(hanging);
  worker.terminate();
  return { truncated, provider, http, events: events.length, lastData: events.at(-1)?.data, sseReport, first: first.value?.text, cancelled };
}
