// Which string route each decoder takes on this runtime, chosen once per realm by feature
// detection and the runtime's name and version, with thresholds measured per runtime
// (docs/runtimes.md has the measurements behind each choice).
import { type JsEngine, jsEngine, runtimeName } from './runtime.js';
import { COPIED, type Core, getCore, shortUnits } from './wasm.js';

/**
 * The routes of `Utf8Decoder.push`:
 * - `core`: the core validates and transcodes (UTF-16 or Latin-1) and the string is one copy out
 *   of WebAssembly memory (Node's `Buffer#latin1Slice` / `ucs2Slice`);
 * - `split`: by read size: the core as `core` below `utf8PlatformFrom` bytes, and from there the
 *   platform decodes the read's whole characters in one call (simdutf runtimes: its fast path;
 *   browsers: a `TextDecoder` call, whose fixed cost the core's short strings do without), the
 *   core holding the carry and the BOM state, and on a failure placing the error (strictness and
 *   offsets are the core's).
 */
export type Utf8Route = 'core' | 'split';

/**
 * The routes of lines and SSE events: `core`, the core writes UTF-16 (or ASCII) and each batch is
 * one Buffer copy; `textdecoder`, the core writes UTF-8 and counts UTF-16 offsets, and one
 * `TextDecoder` call makes each batch's string (docs/frames.md, "Strings").
 */
export type FrameRoute = 'core' | 'textdecoder';

export interface StringRoutes {
  /** The runtime as detected: `node 24.22.3`, `bun 1.4.5`, `deno 2.9.6`, `browser`… */
  readonly runtime: string;
  readonly utf8: Utf8Route;
  /** With `split`: reads of at least this many bytes go to the platform's decoder. */
  readonly utf8PlatformFrom: number;
  /**
   * With `split`, the platform's decoder: `buffer`, Node's simdutf validation (`buffer.isUtf8`)
   * and `Buffer#utf8Slice` while the text is not ASCII (not strict: `utf8Slice` alone),
   * `TextDecoder` while it is (each the faster there on Node 22 and 24); `textdecoder`, a
   * non-streaming `TextDecoder` call (Bun, the browsers).
   */
  readonly utf8Platform: 'buffer' | 'textdecoder';
  /**
   * With `buffer`, reads of text that is not ASCII of at least this many bytes go to a
   * non-streaming `TextDecoder` instead (Node 26: 8192; Infinity: never).
   */
  readonly utf8DecoderFrom: number;
  /**
   * With `split`, how a read below the threshold is decoded while the text is ASCII (the read
   * before it was): `core`, as any other; `platform`, by the platform's decoder as a long read
   * (Bun: its non-streaming `TextDecoder` makes a short ASCII string faster than the core and a
   * copy); `js`, a read of ASCII bytes with nothing carried is made a string by
   * `String.fromCharCode.apply` on a plain array, with no copy into WebAssembly memory (browsers).
   */
  readonly utf8ShortAscii: 'core' | 'platform' | 'js';
  readonly frames: FrameRoute;
  /**
   * With the `textdecoder` frames route, how `SseParser` makes an event's data that holds
   * non-ASCII text: `pieces`, the batch's string stays ASCII and each data's middle (first
   * non-ASCII byte to last) is made apart from UTF-16 and joined to its head and tail (`M_SPLIT`;
   * V8: Chromium's `TextDecoder` makes a two-byte string of a whole batch slowly); `whole`, one
   * `TextDecoder` string for the whole batch (SpiderMonkey: Firefox decodes it faster than the
   * pieces are made and joined). Always `whole` on the core route, which writes UTF-16. (Not the
   * `split` route of `Utf8Decoder`, which is about read sizes.)
   */
  readonly sseData: 'pieces' | 'whole';
  /**
   * With the `textdecoder` frames route, `SseParser` reads of up to this many bytes take the core's
   * route instead: the core writes the batch's text as Latin-1 or UTF-16 and a plain array makes
   * its string (`Core#batchLatin1`, `Core#batchUtf16`), with no `TextDecoder` call; longer reads
   * take the `textdecoder` route. 0: none (and on the `core` route, where every read is the core's
   * already). V8: 384; SpiderMonkey: 0 (`sseCoreTo`).
   */
  readonly sseCoreTo: number;
  /**
   * `Utf8Validator`: reads of at least this many bytes are validated by the platform's
   * `buffer.isUtf8` (simdutf), the core keeping the carry and placing any error; Infinity: never
   * (no `buffer.isUtf8`, or slower than the core there).
   */
  readonly validateFrom: number;
  /**
   * Every frame stream (`SseParser` on both paths, `LineDecoder`, `NdjsonDecoder`, and `ModelStream`
   * and `SseRelay` over SSE or NDJSON): reads of at least this many bytes, with nothing carried
   * into them and no character cut at their end, are checked by the platform's `buffer.isAscii` /
   * `buffer.isUtf8` first, and the core frames them without validating them again (`M_VALID`;
   * `FrameStream#platformValid`); Infinity: never. (Measured on SSE, hence its name.)
   */
  readonly sseValidFrom: number;
  /**
   * Up to how many UTF-16 units a string out of WebAssembly memory is made by one
   * `String.fromCharCode` call with a unit an argument, above which by a copy (`Buffer`) or
   * otherwise: 32 on Node and Deno, 1 on Bun (whose Buffer copies cost less at any length), 16
   * without a Buffer; a string of ASCII bytes up to 16 of them, or this many where it is fewer.
   * Chosen by the runtime, not by the route asked for.
   */
  readonly shortUnits: number;
  /** Why: `detected`, or `SEAM_STRINGS` when the environment forced it. */
  readonly by: 'detected' | 'SEAM_STRINGS' | 'forced';
}

/** The values of SEAM_STRINGS (and of forceStringRoute). */
export type StringRouteName = 'core' | 'split' | 'platform' | 'textdecoder' | 'textdecoder-whole';

/**
 * The read size from which the platform's TextDecoder decodes faster than the core + a copy, per
 * runtime (Infinity: never). Measured with `node build/bench/routes.js` (docs/runtimes.md).
 */
export function platformFrom(name: string, version: string, bufferCopy = true): number {
  // No Buffer (browsers, workerd without nodejs_compat): a read's string out of WebAssembly memory
  // is one String.fromCharCode.apply of at most COPIED units, cheaper than a TextDecoder call's
  // fixed cost
  if (!bufferCopy) return COPIED + 1;
  const major = Number(version.split('.')[0]);
  // Node 24 and later: TextDecoder decodes UTF-8 with simdutf, and Node's utf8Slice makes
  // two-byte strings faster still. Node 22's TextDecoder is 3–8× slower than the core at every
  // read size (0.36–0.47× through the platform), and Node 20's more so: the core there.
  if (name === 'node') return major >= 24 ? 1024 : Infinity;
  // Bun: simdutf, and its strings out of WebAssembly memory are slow to make
  if (name === 'bun') return 1024;
  // Deno: encoding_rs, behind the core at every size. workerd with a Buffer (nodejs_compat): its
  // TextDecoder decodes ASCII at 6–8 GB/s but other text at 0.3–0.6 GB/s, and handing it long reads
  // while the text was ASCII lost more on text with a rare non-ASCII character than it won on ASCII
  // (docs/runtimes.md, *workerd*)
  return Infinity;
}

/**
 * From which read size `Utf8Validator` takes the platform's `buffer.isUtf8` on a runtime
 * (Infinity: never). Measured with `node build/bench/routes.js --only validate` (docs/runtimes.md).
 */
export function validateFrom(name: string, version: string, bufferCopy = true): number {
  if (!bufferCopy) return Infinity;
  // Node: simdutf; the core keeps short reads of non-ASCII text (its call costs less than the
  // platform's call and the carry's bookkeeping there). Bun: its call costs a few ns at any size.
  // Deno: its buffer.isUtf8 is slower than the core on non-ASCII text at every size.
  if (name === 'node') return Number(version.split('.')[0]) >= 24 ? 256 : 1024;
  if (name === 'bun') return 0;
  return Infinity;
}

/**
 * Up to which read size `SseParser` takes the core's route on the `textdecoder` frames route (0:
 * none). Measured in the browsers' benchmark page against the `textdecoder` route, the same page,
 * OpenAI-shaped events (docs/runtimes.md, *SSE's short reads in the browsers*): in Chromium the
 * core's route read one event per read (257 B) 1.31–1.55× as fast, 256 B reads 1.19–1.67×, 384 B
 * 1.15–1.46×, 512 B 0.81–1.01×; in Firefox 0.47–0.67× at 512 B, 0.73–0.81× at 256 B, and at one
 * event per read no direction outside its page-to-page noise. JavaScriptCore (Safari) is taken as
 * V8, as for `sseData`: unmeasured.
 */
export function sseCoreTo(frames: FrameRoute, engine: JsEngine): number {
  return frames === 'textdecoder' && engine !== 'spidermonkey' ? 384 : 0;
}

/**
 * From which read size a frame stream lets the platform validate a read (Infinity: never). Measured
 * against the core's own validation in one process (docs/runtimes.md, *SSE reads validated by the
 * platform*): a gain on Node 24 and 26 from 1 KiB; level on Node 20 and 22 and Bun.
 */
export function sseValidFrom(name: string, version: string, bufferCopy = true): number {
  if (!bufferCopy || name !== 'node') return Infinity;
  return Number(version.split('.')[0]) >= 24 ? 1024 : Infinity;
}

/**
 * The routes for a runtime (`name`, `version` as {@link runtimeName} gives them), where
 * `bufferCopy` says whether it copies strings out of WebAssembly memory natively (Node's Buffer,
 * also in Bun and Deno), and `ask` is what SEAM_STRINGS asked for, if anything.
 */
export function chooseRoutes(name: string, version: string, bufferCopy: boolean, ask?: string, by: StringRoutes['by'] = 'detected', engine: JsEngine = 'other'): StringRoutes {
  const runtime = version === '' ? name : `${name} ${version}`;
  const frames: FrameRoute = bufferCopy ? 'core' : 'textdecoder';
  // (Node 26's TextDecoder validates and makes two-byte strings in one pass faster than
  // isUtf8 + utf8Slice on text that mixes ASCII with the rest from 8 KiB (0.90–0.96× the time at
  // 8 and 16 KiB, 1.06–1.20× at 1–4 KiB), as fast on Chinese, 5–10% slower on emoji at every
  // size; on Node 24 isUtf8 + utf8Slice is as fast or faster at every size: docs/runtimes.md)
  const utf8Platform = name === 'node' && bufferCopy ? 'buffer' : 'textdecoder';
  const utf8DecoderFrom = utf8Platform === 'buffer' && Number(version.split('.')[0]) >= 26 ? 8192 : Infinity;
  const utf8ShortAscii = !bufferCopy ? 'js' : name === 'bun' ? 'platform' : 'core';
  // (docs/runtimes.md: Firefox's SseParser with the data whole read 1.02–1.21× at 1 KiB in eight
  // pages, 0.98–1.36× at one event per read, better in seven)
  const sseData = frames === 'textdecoder' && engine !== 'spidermonkey' ? 'pieces' : 'whole';
  const coreTo = sseCoreTo(frames, engine);
  const short = shortUnits(name, bufferCopy);
  const validate = validateFrom(name, version, bufferCopy);
  const sseValid = sseValidFrom(name, version, bufferCopy);
  if (ask !== undefined) {
    // core: the core at every read size (where there is no Buffer its strings come from
    // TextDecoder or String.fromCharCode), the validator's too; platform: the split route, and
    // the validator's, from the first byte; split: each from the runtime's own threshold (2048 B
    // where it has none); textdecoder: the browsers' route as Chromium takes it (SSE reads of up
    // to 384 B through the core); textdecoder-whole: as Firefox takes it (SSE data decoded whole,
    // every SSE read by TextDecoder)
    switch (ask) {
      case 'core': return { runtime, utf8: 'core', utf8PlatformFrom: Infinity, utf8Platform, utf8DecoderFrom, utf8ShortAscii, frames, sseData, sseCoreTo: coreTo, validateFrom: Infinity, sseValidFrom: Infinity, shortUnits: short, by };
      case 'platform': return { runtime, utf8: 'split', utf8PlatformFrom: 0, utf8Platform, utf8DecoderFrom, utf8ShortAscii, frames, sseData, sseCoreTo: coreTo, validateFrom: bufferCopy ? 0 : Infinity, sseValidFrom: bufferCopy ? 0 : Infinity, shortUnits: short, by };
      case 'split': {
        const from = platformFrom(name, version, bufferCopy);
        return { runtime, utf8: 'split', utf8PlatformFrom: from === Infinity ? 2048 : from, utf8Platform, utf8DecoderFrom, utf8ShortAscii, frames, sseData, sseCoreTo: coreTo, validateFrom: validate === Infinity && bufferCopy ? 2048 : validate, sseValidFrom: sseValid === Infinity && bufferCopy ? 2048 : sseValid, shortUnits: short, by };
      }
      case 'textdecoder':
      case 'textdecoder-whole':
        return { runtime, utf8: 'split', utf8PlatformFrom: COPIED + 1, utf8Platform: 'textdecoder', utf8DecoderFrom: Infinity, utf8ShortAscii: 'js', frames: 'textdecoder', sseData: ask === 'textdecoder' ? 'pieces' : 'whole', sseCoreTo: sseCoreTo('textdecoder', ask === 'textdecoder' ? 'other' : 'spidermonkey'), validateFrom: Infinity, sseValidFrom: Infinity, shortUnits: short, by };
      default: throw new TypeError(`SEAM_STRINGS must be "core", "split", "platform", "textdecoder" or "textdecoder-whole", got ${JSON.stringify(ask)}`);
    }
  }
  const from = platformFrom(name, version, bufferCopy);
  return { runtime, utf8: from === Infinity ? 'core' : 'split', utf8PlatformFrom: from, utf8Platform, utf8DecoderFrom, utf8ShortAscii, frames, sseData, sseCoreTo: coreTo, validateFrom: validate, sseValidFrom: sseValid, shortUnits: short, by };
}

let routes: StringRoutes | undefined;
let routesCore: Core | undefined;
let forced: string | StringRoutes | undefined;

function envRoute(): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const v = env?.SEAM_STRINGS;
  return v === undefined || v === '' ? undefined : v;
}

function choose(core: Core): StringRoutes {
  if (typeof forced === 'object') return { ...forced, by: 'forced' };
  const { name, version } = runtimeName();
  const ask = forced ?? envRoute();
  const by = forced !== undefined ? 'forced' : ask !== undefined ? 'SEAM_STRINGS' : 'detected';
  return chooseRoutes(name, version, core.textMode === 0, ask, by, jsEngine());
}

/**
 * Which string routes seam takes in this realm: chosen once, on first use, from the runtime's name
 * and version and what it offers (docs/runtimes.md has the measurements behind each choice);
 * `SEAM_STRINGS` (core, split, platform, textdecoder, textdecoder-whole) forces one, for tests and benchmarks.
 */
export function stringRoutes(core: Core = getCore()): StringRoutes {
  if (routes === undefined || routesCore !== core) {
    routes = choose(core);
    routesCore = core;
  }
  return routes;
}

/**
 * Which string routes seam chose in this realm, for a look at what the runtime was taken for:
 * its `runtime`, each route and threshold, and `by` (`detected`, or `SEAM_STRINGS` when that
 * variable forced one). docs/runtimes.md has the measurements behind each choice.
 */
export function chosenStringRoutes(): StringRoutes {
  return stringRoutes();
}

/**
 * @internal For tests and benchmarks: decoders made after this call take `route` (as the
 * SEAM_STRINGS values, or another runtime's routes as {@link chooseRoutes} gives them), or the
 * detected routes again with `undefined`.
 */
export function forceStringRoute(route: StringRouteName | StringRoutes | undefined): void {
  forced = route;
  routes = undefined;
}

/** Node's simdutf validation and its UTF-8 slice of any Uint8Array, where the runtime has them. */
export interface NodeUtf8 {
  isUtf8(b: Uint8Array): boolean;
  /** (Node 18.15 and later) */
  isAscii?(b: Uint8Array): boolean;
  utf8Slice(this: Uint8Array, start: number, end: number): string;
}

let nodeUtf8: NodeUtf8 | null | undefined;

/** Node's `buffer.isUtf8` and `Buffer#utf8Slice` (through process.getBuiltinModule: no import), or null. */
export function nodeUtf8Functions(): NodeUtf8 | null {
  if (nodeUtf8 !== undefined) return nodeUtf8;
  const p = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const buffer = typeof p?.getBuiltinModule === 'function'
    ? p.getBuiltinModule('buffer') as { isUtf8?: NodeUtf8['isUtf8']; isAscii?: NodeUtf8['isAscii']; Buffer?: { prototype: { utf8Slice?: NodeUtf8['utf8Slice'] } } } | undefined
    : undefined;
  const isUtf8 = buffer?.isUtf8;
  const utf8Slice = buffer?.Buffer?.prototype.utf8Slice;
  const isAscii = typeof buffer?.isAscii === 'function' ? buffer.isAscii : undefined;
  return (nodeUtf8 = typeof isUtf8 === 'function' && typeof utf8Slice === 'function' ? { isUtf8, isAscii, utf8Slice } : null);
}
