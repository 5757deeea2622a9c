// A Worker for workerd (test/runtimes/workerd.test.ts bundles it as wrangler would, resolving
// `seam-stream` with the conditions workerd, worker, browser): it decodes and relays the request's
// body through the package, and says which core it runs, whether this runtime compiles
// WebAssembly from bytes, and which string routes seam chose here.
import { ModelPartStream, ModelStreamError, ModelTextStream, SeamWasmError, SseParser, SseRelayStream, stringRoutes, wasmBackend } from 'seam-stream';

const json = (value, status = 200) => new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json' } });

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const q = (name) => url.searchParams.get(name) ?? undefined;
    try {
      if (url.pathname === '/about') {
        let codegen = 'allowed';
        try { new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])); } catch (e) { codegen = `${e.name}: ${e.message}`; }
        const events = new SseParser().push(new TextEncoder().encode('data: 世界 👩‍💻\n\n'));
        // whether workerd calls a transformer's cancel (a cancelled readable side calls it at once),
        // and whether seam's streams therefore keep the TransformStream's own sides
        let cancels = false;
        new TransformStream({ cancel() { cancels = true; } }).readable.cancel().catch(() => {});
        const relay = new SseRelayStream({ from: 'openai' });
        const ownSides = Object.hasOwn(relay, 'readable');
        await relay.readable.cancel();
        return json({ backend: wasmBackend(), codegen, events, cancels, ownSides });
      }
      if (url.pathname === '/routes') {
        // (Infinity as a string: JSON has no Infinity)
        const routes = JSON.parse(JSON.stringify(stringRoutes(), (_, v) => (v === Infinity ? 'Infinity' : v)));
        return json({ Buffer: typeof globalThis.Buffer, routes });
      }
      if (url.pathname === '/relay') {
        const relay = new SseRelayStream({ from: q('from'), to: q('to'), id: q('id'), model: q('model') });
        return new Response(request.body.pipeThrough(relay), { headers: { 'content-type': 'text/event-stream' } });
      }
      if (url.pathname === '/drop') {
        // the request's bytes as an upstream body whose connection then drops: the client's stream
        // ends with the relay's end for a cut upstream, and the upstream's error is the stream's
        const bytes = new Uint8Array(await request.arrayBuffer());
        let sent = false;
        const upstream = new ReadableStream({
          pull(c) {
            if (sent) return c.error(new Error('upstream dropped'));
            sent = true;
            c.enqueue(bytes);
          },
        });
        const relay = new SseRelayStream({ from: q('from'), to: q('to'), id: q('id'), model: q('model') });
        const body = upstream.pipeThrough(relay);
        const reader = body.getReader();
        const parts = [];
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          parts.push(value);
        }
        return new Response(new Blob(parts), { headers: { 'content-type': 'text/event-stream', 'x-upstream-error': String(relay.upstreamError?.message) } });
      }
      if (url.pathname === '/text') {
        const stream = new ModelTextStream({ format: q('format'), choice: Number(q('choice') ?? 0) });
        const reader = request.body.pipeThrough(stream).getReader();
        let text = '';
        let error;
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            text += value;
          }
        } catch (e) {
          if (!(e instanceof ModelStreamError)) throw e;
          error = { code: e.code, offset: e.offset, text: e.text };
        }
        const report = error ? undefined : await stream.report;
        const m = stream.model;
        return json({ text, error, status: m.status, finishReason: m.finishReason, usage: m.usage, reasoning: m.reasoning,
          toolCalls: m.toolCalls, sha256: report?.sha256, graphemes: report?.graphemes, textLog: m.log === 2 /* LOG_ON: its private state */ });
      }
      if (url.pathname === '/parts') {
        // the parts a fetch handler renders: each kind joined, the calls as their last parts have them,
        // and every part but the finish, in order
        const stream = new ModelPartStream({ format: q('format'), choice: Number(q('choice') ?? 0) });
        const reader = request.body.pipeThrough(stream).getReader();
        let text = '';
        let reasoning = '';
        const calls = [];
        const all = [];
        let finish;
        let error;
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            if (value.type !== 'finish') all.push(value);
            if (value.type === 'text') text += value.text;
            else if (value.type === 'reasoning') reasoning += value.text;
            else if (value.type === 'tool-call') calls[value.call.index] = value.call;
            else if (value.type === 'finish') finish = { status: value.report.status, sha256: value.report.sha256 };
          }
        } catch (e) {
          if (!(e instanceof ModelStreamError)) throw e;
          error = { code: e.code, offset: e.offset };
        }
        return json({ text, reasoning, toolCalls: calls, finish, error, parts: all });
      }
      return json({ error: 'not found' }, 404);
    } catch (e) {
      return json({ thrown: e instanceof SeamWasmError ? 'SeamWasmError' : e?.name, code: e?.code, message: String(e?.message ?? e) }, 500);
    }
  },
};
