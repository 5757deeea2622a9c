// What the runtime tests share: the pinned runtimes (scripts/runtimes.mjs), a free port, a child
// process serving HTTP until stopped, and workerd serving Workers bundled as wrangler bundles them
// (esbuild, `seam-stream` resolved through the package's exports with the conditions workerd,
// worker and browser, each `.wasm` import left to workerd as a compiled module).
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { basename, join, resolve } from 'node:path';
import { build } from 'esbuild';
// @ts-expect-error: a plain ESM script without types
import { runtimePath } from '../../scripts/runtimes.mjs';

export const root = resolve(__dirname, '..', '..');

/** The executable of a pinned runtime; `npm run test:runtimes` installs them first. */
export function runtime(name: 'node22' | 'node24' | 'node26' | 'bun' | 'deno' | 'workerd'): string {
  const exe = (runtimePath as (n: string) => string | undefined)(name);
  if (exe === undefined) throw new Error(`${name} is not installed: node scripts/runtimes.mjs install ${name}`);
  return exe;
}

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolvePort(port));
    });
  });
}

export interface Served {
  base: string;
  /** What the process wrote so far (stdout and stderr). */
  output(): string;
  stop(): Promise<void>;
}

/** Starts `cmd args` and waits until `probe` (a path) answers over HTTP on `port`. */
export async function serveProcess(cmd: string, args: string[], port: number, probe: string, options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Served> {
  const child: ChildProcess = spawn(cmd, args, { cwd: options.cwd ?? root, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${basename(cmd)} exited with ${child.exitCode}:\n${out}`);
    try {
      const res = await fetch(base + probe);
      await res.arrayBuffer();
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`${basename(cmd)} did not answer on ${base} within 30 s:\n${out}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    base,
    output: () => out,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(t);
      }
    },
  };
}

/**
 * A Worker to serve: its entry file, the conditions `seam-stream` is resolved with, and its
 * compatibility date (2026-11-01 unless given).
 */
export interface WorkerSpec { name: string; entry: string; conditions: string[]; bindings?: Record<string, string>; compatibilityDate?: string }

/**
 * Bundles each Worker as wrangler does (one ES module; `.wasm` imports kept as modules of their
 * own), writes a workerd config with one socket per Worker on 127.0.0.1, and serves it.
 */
export async function serveWorkers(specs: WorkerSpec[]): Promise<{ bases: Record<string, string>; workerd: Served; stop(): Promise<void> }> {
  mkdirSync(join(root, 'build'), { recursive: true });
  const dir = mkdtempSync(join(root, 'build', 'workerd-'));
  // `seam-stream` resolves to this checkout through node_modules, as it would in a user's project
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(root, join(dir, 'node_modules', 'seam-stream'), 'dir');
  const services: string[] = [];
  const sockets: string[] = [];
  const ports: Record<string, number> = {};
  const socketArgs: string[] = [];
  for (const spec of specs) {
    const out = join(dir, spec.name);
    mkdirSync(out);
    const wasm = new Map<string, string>();
    await build({
      entryPoints: [spec.entry],
      nodePaths: [join(dir, 'node_modules')],
      outfile: join(out, 'worker.js'),
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      target: 'es2022',
      conditions: spec.conditions,
      mainFields: ['module', 'main'],
      logLevel: 'error',
      plugins: [{
        name: 'wasm-modules',
        setup(b) {
          b.onResolve({ filter: /\.wasm(\?module)?$/ }, (args) => {
            const file = resolve(args.resolveDir, args.path.replace(/\?module$/, ''));
            wasm.set(basename(file), file);
            return { path: `./${basename(file)}`, external: true };
          });
        },
      }],
    });
    const modules = [`(name = "worker.js", esModule = embed "${spec.name}/worker.js")`];
    for (const [name, file] of wasm) {
      copyFileSync(file, join(out, name));
      modules.push(`(name = "${name}", wasm = embed "${spec.name}/${name}")`);
    }
    const bindings = Object.entries(spec.bindings ?? {}).map(([k, v]) => `(name = ${JSON.stringify(k)}, text = ${JSON.stringify(v)})`);
    services.push(`(name = "${spec.name}", worker = (modules = [${modules.join(', ')}], bindings = [${bindings.join(', ')}], `
      + `compatibilityDate = "${spec.compatibilityDate ?? '2026-11-01'}", globalOutbound = "loopback"))`);
    sockets.push(`(name = "${spec.name}", address = "127.0.0.1:0", http = (), service = "${spec.name}")`);
    ports[spec.name] = await freePort();
    socketArgs.push('--socket-addr', `${spec.name}=127.0.0.1:${ports[spec.name]}`);
  }
  writeFileSync(join(dir, 'config.capnp'), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [${services.join(',\n    ')},
    (name = "loopback", network = (allow = ["public", "private", "local"]))],
  sockets = [${sockets.join(',\n    ')}],
);
`);
  const first = specs[0].name;
  const workerd = await serveProcess(runtime('workerd'), ['serve', join(dir, 'config.capnp'), ...socketArgs], ports[first], '/');
  const bases = Object.fromEntries(specs.map((s) => [s.name, `http://127.0.0.1:${ports[s.name]}`]));
  return {
    bases,
    workerd,
    async stop() {
      await workerd.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `body` as a request body that arrives in pieces of the given sizes (cycled). */
export function inPieces(body: Uint8Array, sizes: number[]): ReadableStream<Uint8Array> {
  let at = 0;
  let k = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= body.length) {
        controller.close();
        return;
      }
      const n = sizes[k++ % sizes.length];
      controller.enqueue(body.slice(at, at + n));
      at += n;
    },
  });
}

/** POSTs `body` in pieces and returns the response's status and bytes. */
export async function post(url: string, body: Uint8Array, sizes = [7, 1, 64, 3, 500]): Promise<{ status: number; bytes: Uint8Array; type: string | null }> {
  const res = await fetch(url, { method: 'POST', body: inPieces(body, sizes), duplex: 'half' } as RequestInit);
  return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()), type: res.headers.get('content-type') };
}
