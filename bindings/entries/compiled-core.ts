// The entry for runtimes that compile no WebAssembly from bytes (Cloudflare's workerd, Vercel's
// edge runtime): the library as the ESM build has it, with the core imported as a `.wasm` module
// (a compiled WebAssembly.Module) and handed over at import, instead of its bytes embedded as base64.
// Built by tsup.edge.config.ts twice, as dist/workerd.js (`import … from './seam.simd.wasm'`,
// what wrangler and workerd's own config load as a compiled module) and dist/edge.js (the same with
// `?module`, the form Vercel's edge runtime and Next.js use); `./core.wasm` below is replaced by one
// of those at build time, and the embedded binaries by nothing.
import core from './core.wasm';
import { setCoreModule } from '../core/wasm.js';

setCoreModule(core);

export * from '../index.js';
