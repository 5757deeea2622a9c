// The peers at their current versions where the runtime allows (bench/peer-versions.mjs):
// eventsource-parser 4, else 3.1.1, the last release whose engines include Node 20 (the same
// createParser API). Both are pinned devDependencies (`eventsource-parser`,
// `eventsource-parser-4`). No Node import: bench/streams.ts bundles this module into a browser
// page too.
import { createParser as createParser3 } from 'eventsource-parser';
import { createParser as createParser4 } from 'eventsource-parser-4';
import { modernSse, ssePeer } from './peer-versions.mjs';

type Process = { getBuiltinModule?(id: 'node:fs'): typeof import('node:fs') };
const proc = (globalThis as { process?: Process }).process;

export const createParser: typeof createParser3 = modernSse ? createParser4 : createParser3;

/** The version of eventsource-parser the benchmarks run here, from its package.json. */
export function eventsourceParserVersion(): string {
  try {
    const url = new URL(`../../node_modules/${ssePeer}/package.json`, import.meta.url); // from build/bench/
    return (JSON.parse(proc!.getBuiltinModule!('node:fs').readFileSync(url, 'utf8')) as { version: string }).version;
  } catch {
    return modernSse ? '4' : '3';
  }
}
