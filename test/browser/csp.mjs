// Loaded by a page served with a Content-Security-Policy header (a module script, as a page's
// own code would run): uses the core, and records what happened in window.__csp.
const m = await import('/dist/index.js');
const record = (e) => ({ ok: false, cls: e instanceof m.SeamWasmError ? 'SeamWasmError' : e?.constructor?.name, name: e.name, code: e.code, message: e.message, cause: e.cause?.constructor?.name });
let result;
try {
  const events = new m.SseParser().push(new TextEncoder().encode('data: 世界\n\n'));
  result = { ok: true, events, backend: m.wasmBackend() };
} catch (e) {
  result = record(e);
  result.again = (() => { try { new m.Utf8Decoder(); return 'no error'; } catch (e2) { return e2 === e ? 'same error' : e2.code; } })();
  result.ready = await m.ready().then(() => 'resolved', (e2) => e2.code);
  const a = new m.TextAssembler();
  a.push('e\u0301');
  result.textLayer = a.finish().text;
}
window.__csp = result;
