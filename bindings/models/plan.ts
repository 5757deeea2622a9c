// What a model reader's options decide, made once per set of options and core: the format's
// description, its path program and template placed in the core's program area, the framing and
// the mode of the core's calls. Every stream made with the same options shares one plan.
import { JSON_PROG_CAP, MK_LINES, MK_SSE, MK_STRIP_DATA, M_COMMENTS, M_IN_SPANS, M_UTF8_OUT } from '../core/generated/abi.js';
import { type Core } from '../core/wasm.js';
import { type FormatSpec } from './formats/describe.js';
import { FORMATS, MODEL_FORMATS, type ModelFormat } from './formats/index.js';

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
  readonly spec: FormatSpec;
  readonly prog: number;
  /** The format's template (quiet events): where it lies in the core. */
  readonly tmpl: number;
  /** MK_SSE, or MK_LINES (with MK_STRIP_DATA for ddg). */
  readonly framing: number;
  /** The frame mode of a push. */
  readonly mode: number;
}

let plansOf: Core | null = null;
const plans = /* @__PURE__ */ new Map<string, Plan>();

export function planOf(core: Core, format: ModelFormat, fatal: boolean, maxEventBytes: number, choice: number, comments: boolean,
  eof: 'error' | 'allow', raw: boolean, normalize: 'NFC' | false): Plan {
  if (plansOf !== core) {
    plansOf = core;
    plans.clear();
  }
  const key = `${format}|${fatal}|${maxEventBytes}|${choice}|${comments}|${eof}|${raw}|${normalize}`;
  let plan = plans.get(key);
  if (plan === undefined) {
    if (plans.size > 256) plans.clear(); // (a realm with many option sets: a cache, not a registry)
    const spec = FORMATS[format];
    const lines = spec.framing === 'lines';
    const prog = programAddress(core, format, spec);
    plan = Object.freeze({
      format, fatal, maxEventBytes, choice, comments, eof, raw, normalize, spec, prog,
      tmpl: prog + templateOffset(spec),
      framing: lines ? MK_LINES | (spec.stripData ? MK_STRIP_DATA : 0) : MK_SSE,
      mode: lines ? M_UTF8_OUT : M_UTF8_OUT | M_IN_SPANS | M_COMMENTS,
    });
    plans.set(key, plan);
  }
  return plan;
}

/** Each format's program, placed once per core in its slot of the program area (PROGRAM_SLOTS of them). */
const PROGRAM_SLOTS = 8;
let programsOf: Core | null = null;
const programAt = /* @__PURE__ */ new Map<ModelFormat, number>();

/** Where a format's template lies in its slot, after its program (4-byte aligned). */
const templateOffset = (spec: FormatSpec): number => (spec.program.length + 3) & ~3;

/** Where format's path program lies in the core (placed there on first use). */
export function programAddress(core: Core, format: ModelFormat, spec: FormatSpec = FORMATS[format]): number {
  if (programsOf !== core) {
    programsOf = core;
    programAt.clear();
  }
  let at = programAt.get(format);
  if (at === undefined) {
    const size = JSON_PROG_CAP / PROGRAM_SLOTS;
    if (templateOffset(spec) + spec.template.length > size) throw new Error(`seam: the ${format} path program does not fit its slot`);
    const slot = MODEL_FORMATS.indexOf(format);
    if (slot >= PROGRAM_SLOTS) throw new Error(`seam: no program slot for ${format}`);
    at = (core.x.JSON_PROG_PTR.value as number) + size * slot;
    core.sync();
    core.u8.set(spec.program, at);
    core.u8.set(spec.template, at + templateOffset(spec));
    programAt.set(format, at);
  }
  return at;
}
