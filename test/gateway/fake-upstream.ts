// A fake model upstream for the gateway's tests: an HTTP server that answers each request with the
// script registered under the request's `model` (every format's request keeps it), writing the
// script's pieces as separate writes, and that counts its open sockets, so a test can check that
// nothing is left behind. Over HTTPS with `tls` (test/gateway/tls/: a self-signed certificate for
// localhost and 127.0.0.1, for these tests only).
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';

/** The test certificate (PEM) that a TLS fake upstream presents, and its key. */
export const TEST_CERT = join(__dirname, 'tls', 'localhost-cert.pem');
const TEST_KEY = join(__dirname, 'tls', 'localhost-key.pem');

export interface Script {
  /** HTTP status (200 unless given) and content type. */
  status?: number;
  contentType?: string;
  /** The body's pieces, each written on its own (with `gapMs` between them). */
  pieces?: Uint8Array[];
  /** Milliseconds between pieces (0: the next macrotask). */
  gapMs?: number;
  /** After the pieces: end the response, destroy the socket mid-body, or keep it open. */
  then?: 'end' | 'destroy' | 'hang';
  /** Instead of pieces: a writer of its own (it must end or destroy the response). */
  write?: (res: ServerResponse, req: IncomingMessage) => void | Promise<void>;
}

export interface Received { method: string; url: string; headers: IncomingMessage['headers']; body: unknown; /** The body's text as it arrived. */ raw: string }

export class FakeUpstream {
  readonly server: Server | import('node:https').Server;
  readonly scripts = new Map<string, Script>();
  /** Every request, in order. */
  readonly received: Received[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly closedWaiters: (() => void)[] = [];
  url = '';

  constructor(private readonly tls = false) {
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (s: string) => { text += s; });
      req.on('end', () => {
        let body: unknown;
        try { body = JSON.parse(text); } catch { body = text; }
        this.received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, raw: text });
        // (the model in the body; Gemini's and Bedrock's requests name it in the path)
        const inPath = /^\/(?:v1beta\/models\/([^/:?]+):|model\/([^/?]+)\/)/.exec(req.url ?? '');
        const model = (body as { model?: string } | null)?.model ?? (inPath ? decodeURIComponent(inPath[1] ?? inPath[2]) : '');
        const script = this.scripts.get(model);
        if (!script) {
          res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no script for model ${model}`, type: 'test' } }));
          return;
        }
        void this.play(script, req, res);
      });
    };
    this.server = tls ? createTlsServer({ key: readFileSync(TEST_KEY), cert: readFileSync(TEST_CERT) }, handler) : createServer(handler);
    this.server.on(tls ? 'secureConnection' : 'connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => {
        this.sockets.delete(s);
        if (this.sockets.size === 0) for (const w of this.closedWaiters.splice(0)) w();
      });
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `${this.tls ? 'https' : 'http'}://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  /** Sockets open now (the gateway's connections to this upstream). */
  get openSockets(): number {
    return this.sockets.size;
  }

  /** Resolves once no socket is open (rejects after `ms`). */
  async noSockets(ms = 5000): Promise<void> {
    if (this.sockets.size === 0) return;
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`the upstream still has ${this.sockets.size} open sockets after ${ms} ms`)), ms);
      this.closedWaiters.push(() => { clearTimeout(t); resolve(); });
    });
  }

  private async play(script: Script, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (script.write) return script.write(res, req);
    res.writeHead(script.status ?? 200, { 'content-type': script.contentType ?? 'text/event-stream' });
    res.flushHeaders();
    for (const piece of script.pieces ?? []) {
      if (res.destroyed) return;
      res.write(piece);
      await new Promise((w) => (script.gapMs ? setTimeout(w, script.gapMs) : setImmediate(w)));
    }
    if (script.then === 'destroy') res.socket?.destroy();
    else if (script.then !== 'hang') res.end();
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await closed;
    await this.noSockets();
  }
}
