// The peers at their current versions where the runtime allows: eventsource-parser 4 needs Node
// ≥ 22.12 (its engines), and runs on Bun and Deno; on Node 20 the benchmarks use 3.1.1, the last
// release whose engines include it (the same createParser API). Both are pinned devDependencies
// (`eventsource-parser`, `eventsource-parser-4`). No Node import: bench/streams.ts bundles this
// module into a browser page too.
import { createParser as createParser3 } from 'eventsource-parser';
import { createParser as createParser4 } from 'eventsource-parser-4';

type Process = { versions: Record<string, string | undefined>; getBuiltinModule?(id: 'node:fs'): typeof import('node:fs') };
const proc = (globalThis as { process?: Process }).process;
const versions = proc?.versions ?? {};
const [major, minor] = (versions.node ?? '0.0').split('.').map(Number);
/** Whether this runtime runs eventsource-parser 4: Bun, Deno, Node ≥ 22.12. */
export const modernPeers = versions.bun !== undefined || versions.deno !== undefined || major > 22 || (major === 22 && minor >= 12);

export const createParser: typeof createParser3 = modernPeers ? createParser4 : createParser3;

/** The version of eventsource-parser the benchmarks run here, from its package.json. */
export function eventsourceParserVersion(): string {
  const dir = modernPeers ? 'eventsource-parser-4' : 'eventsource-parser';
  try {
    const url = new URL(`../../node_modules/${dir}/package.json`, import.meta.url); // from build/bench/
    return (JSON.parse(proc!.getBuiltinModule!('node:fs').readFileSync(url, 'utf8')) as { version: string }).version;
  } catch {
    return modernPeers ? '4' : '3';
  }
}
