// The string routes seam chose in the runtime this runs on, read through the public diagnostic
// stringRoutes(): Node by its version, Bun, Deno (the portable suites run this file on Node 22 and
// 26, Bun and Deno; vitest on Node 20 and 24). Each runtime's expectation is written here from
// docs/runtimes.md's measurements, independently of the code that detects the runtime.
import { describe, expect, it } from 'vitest';
import { stringRoutes } from '../../bindings/index.js';

const g = globalThis as { Bun?: { version: string }; Deno?: { version: { deno: string } }; process?: { versions?: { node?: string }; env?: Record<string, string | undefined> } };
const forcedByEnv = g.process?.env?.SEAM_STRINGS !== undefined;

describe('the string routes this runtime takes', () => {
  it.skipIf(forcedByEnv)('are the ones measured for it', () => {
    const r = stringRoutes();
    expect(r.by).toBe('detected');
    if (g.Bun) {
      expect(r).toMatchObject({ runtime: `bun ${g.Bun.version}`, utf8: 'split', utf8PlatformFrom: 1024, utf8Platform: 'textdecoder', utf8ShortAscii: 'platform', frames: 'core', sseData: 'whole', validateFrom: 0, sseValidFrom: Infinity, shortUnits: 1 });
    } else if (g.Deno) {
      expect(r).toMatchObject({ runtime: `deno ${g.Deno.version.deno}`, utf8: 'core', utf8PlatformFrom: Infinity, frames: 'core', sseData: 'whole', validateFrom: Infinity, sseValidFrom: Infinity, shortUnits: 32 });
    } else {
      const version = g.process!.versions!.node!;
      const major = Number(version.split('.')[0]);
      // (one check per runtime, as on the others: the portable suites compare the checks' number)
      if (major >= 24) {
        expect(r).toMatchObject({ runtime: `node ${version}`, utf8: 'split', utf8PlatformFrom: 1024, utf8Platform: 'buffer', utf8DecoderFrom: major >= 26 ? 8192 : Infinity, utf8ShortAscii: 'core', frames: 'core', sseData: 'whole', validateFrom: 256, sseValidFrom: 1024, shortUnits: 32 });
      } else {
        expect(r).toMatchObject({ runtime: `node ${version}`, utf8: 'core', utf8PlatformFrom: Infinity, frames: 'core', sseData: 'whole', validateFrom: 1024, sseValidFrom: Infinity, shortUnits: 32 });
      }
    }
  });
});
