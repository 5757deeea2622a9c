// Which runtime this is (its name and version) and which JavaScript engine, as its globals tell:
// what the string routes (strings.ts) and the core's short strings (wasm.ts) are chosen by.

/** A runtime's name and version, as its globals tell. */
export function runtimeName(): { name: 'node' | 'bun' | 'deno' | 'workerd' | 'browser' | 'unknown'; version: string } {
  const g = globalThis as {
    process?: { versions?: Record<string, string | undefined> };
    Deno?: { version?: { deno?: string } };
    navigator?: { userAgent?: string };
    document?: unknown;
  };
  const v = g.process?.versions;
  if (v?.bun !== undefined) return { name: 'bun', version: v.bun };
  if (g.Deno?.version?.deno !== undefined) return { name: 'deno', version: g.Deno.version.deno };
  if (g.navigator?.userAgent === 'Cloudflare-Workers') return { name: 'workerd', version: '' };
  if (v?.node !== undefined) return { name: 'node', version: v.node };
  if (g.document !== undefined || g.navigator !== undefined) return { name: 'browser', version: '' };
  return { name: 'unknown', version: '' };
}

/** The engines a route depends on. */
export type JsEngine = 'spidermonkey' | 'other';

/**
 * The JavaScript engine, where it decides a route: SpiderMonkey (Firefox), known by its
 * non-standard `InternalError` global (a native function: not one a page defined), or any
 * `other` (V8, JavaScriptCore).
 */
export function jsEngine(): JsEngine {
  const f = (globalThis as { InternalError?: unknown }).InternalError;
  return typeof f === 'function' && Function.prototype.toString.call(f).includes('[native code]') ? 'spidermonkey' : 'other';
}
