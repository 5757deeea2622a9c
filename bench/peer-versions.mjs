// Which releases of the peers this runtime runs: the current ones where their engines allow, else
// the last releases whose engines include it, each as the name of the pinned package that holds
// it. One place for the benchmarks that run them (bench/peers.ts, bundled into a browser page
// too: no Node import here; the gateway benchmark).
const versions = globalThis.process?.versions ?? {};
const [major, minor] = (versions.node ?? '0.0').split('.').map(Number);
const nodeAtLeast = (a, b) => major > a || (major === a && minor >= b);

/** eventsource-parser 4 (engines: Node ≥ 22.12; it runs on Bun, Deno and in browsers), else 3.1.1. */
export const modernSse = versions.node === undefined || versions.bun !== undefined || versions.deno !== undefined || nodeAtLeast(22, 12);
/** The package of the eventsource-parser this runtime runs. */
export const ssePeer = modernSse ? 'eventsource-parser-4' : 'eventsource-parser';

/** The package of the undici this runtime runs: 8 (engines: Node ≥ 22.19; on Node 20 it fails to load), else 7.30.2. Node only: the gateway benchmark. */
export const undiciPeer = versions.bun === undefined && versions.deno === undefined && nodeAtLeast(22, 19) ? 'undici-8' : 'undici';
