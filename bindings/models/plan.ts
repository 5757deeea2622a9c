// What a model reader's options decide, made once per set of options and core: the format's
// description, its path program and template placed in the core's program area, the framing and
// the mode of the core's calls. Every stream made with the same options shares one plan.
import { JSON_PROG_CAP, MK_LINES, MK_SSE, MK_STRIP_DATA, M_COMMENTS, M_IN_SPANS, M_UTF8_OUT } from '../core/generated/abi.js';
import { type Core } from '../core/wasm.js';
import { type FormatSpec, runningUsagePath } from './formats/describe.js';
import { FORMATS, type ModelFormat } from './formats/index.js';

/** What a reader's options decide: the same object for every stream made with the same options. */
export interface Plan {
  readonly format: ModelFormat;
  readonly fatal: boolean;
  readonly maxEventBytes: number;
  readonly choice: number;
  readonly comments: boolean;
  readonly eof: 'error' | 'allow';
  readonly raw: boolean;
  readonly normalize: 'NFC' | false;
  /** The most bytes of tool-call arguments a stream keeps. */
  readonly maxArgumentBytes: number;
  /** The most bytes of reasoning (and a refusal) a stream keeps. */
  readonly maxReasoningBytes: number;
  /** The most bytes of media data (as sent) a stream keeps. */
  readonly maxMediaBytes: number;
  readonly spec: FormatSpec;
  readonly prog: number;
  /** The format's template (quiet events): where it lies in the core. */
  readonly tmpl: number;
  /** Whether the template keeps a running usage (MT_LAST), which the stream reports when no completion brought one. */
  readonly runningUsage: boolean;
  /** MK_SSE, or MK_LINES (with MK_STRIP_DATA for ddg). */
  readonly framing: number;
  /** The frame mode of a push. */
  readonly mode: number;
}

let plansOf: Core | null = null;
const plans = /* @__PURE__ */ new Map<string, Plan>();

export function planOf(core: Core, format: ModelFormat, fatal: boolean, maxEventBytes: number, choice: number, comments: boolean,
  eof: 'error' | 'allow', raw: boolean, normalize: 'NFC' | false, maxArgumentBytes: number, maxReasoningBytes: number, maxMediaBytes: number): Plan {
  if (plansOf !== core) {
    plansOf = core;
    plans.clear();
  }
  const key = `${format}|${fatal}|${maxEventBytes}|${choice}|${comments}|${eof}|${raw}|${normalize}|${maxArgumentBytes}|${maxReasoningBytes}|${maxMediaBytes}`;
  let plan = plans.get(key);
  if (plan === undefined) {
    if (plans.size > 256) plans.clear(); // (a realm with many option sets: a cache, not a registry)
    const spec = FORMATS[format];
    const lines = spec.framing === 'lines';
    const prog = programAddress(core, format, spec);
    plan = Object.freeze({
      format, fatal, maxEventBytes, choice, comments, eof, raw, normalize, maxArgumentBytes, maxReasoningBytes, maxMediaBytes, spec, prog,
      tmpl: prog + templateOffset(spec),
      runningUsage: runningUsagePath(spec.template) >= 0,
      framing: lines ? MK_LINES | (spec.stripData ? MK_STRIP_DATA : 0) : MK_SSE,
      mode: lines ? M_UTF8_OUT : M_UTF8_OUT | M_IN_SPANS | M_COMMENTS,
    });
    plans.set(key, plan);
  }
  return plan;
}

/** Each format's program and template, placed once per core, one after the other, in the program area. */
let programsOf: Core | null = null;
const programAt = /* @__PURE__ */ new Map<string, number>();
let programEnd = 0;

/** Where a format's template lies after its program (4-byte aligned). */
const templateOffset = (spec: FormatSpec): number => (spec.program.length + 3) & ~3;

/** Where a format's path program lies in the core (placed there on first use); its template follows it. */
export function programAddress(core: Core, format: ModelFormat, spec: FormatSpec = FORMATS[format]): number {
  return placed(core, format, spec.program, spec.template);
}

/** The template of a program that has none (one array: a lookup makes no new one). */
const NO_TEMPLATE = /* @__PURE__ */ new Uint8Array(0);

/** Where a format's envelope program lies in the core (placed there on first use). */
export function envelopeAddress(core: Core, format: ModelFormat): number {
  return placed(core, `${format} envelope`, FORMATS[format].envelope!, NO_TEMPLATE);
}

/** Where a path program of the readers' own (not a format's) lies in the core (placed there on first use). */
export function ownProgram(core: Core, key: string, program: Uint8Array): number {
  return placed(core, key, program, NO_TEMPLATE);
}

/** Where a program (and the template after it) lies in the program area: placed one after the other, once per core. */
function placed(core: Core, key: string, program: Uint8Array, tmpl: Uint8Array): number {
  if (programsOf !== core) {
    programsOf = core;
    programAt.clear();
    programEnd = 0;
  }
  let at = programAt.get(key);
  if (at === undefined) {
    const t = (program.length + 3) & ~3;
    const size = (t + tmpl.length + 15) & ~15;
    if (programEnd + size > JSON_PROG_CAP) throw new Error(`seam: the ${key} path program does not fit the program area`);
    at = (core.x.JSON_PROG_PTR.value as number) + programEnd;
    programEnd += size;
    core.sync();
    core.u8.set(program, at);
    core.u8.set(tmpl, at + t);
    programAt.set(key, at);
  }
  return at;
}
