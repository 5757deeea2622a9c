// Checks of options and arguments, for every layer: an options argument that is not an object,
// an unknown key (named, with the valid ones and the nearest of them), and a value of the wrong
// type or out of range all throw before anything is built. Messages have one form,
// `Where: name must be …, got …`, with a hint in parentheses where a habit explains the mistake.
//
// A value of the wrong JavaScript type is a TypeError. A value of the right type that the option
// does not accept (0 bytes, 'nfc' for 'NFC') is made by the caller's `invalid` function, so that
// each layer keeps its error class; by default it is a TypeError too.
import { editDistance } from './edit-distance.js';

/** Makes the error for a value of the right type that an option does not accept. */
export type InvalidValue = (message: string) => Error;

const typeError: InvalidValue = (message) => new TypeError(message);

/** Hints for {@link checkOptions}. */
export interface OptionHints {
  /**
   * For unknown keys that a habit explains (a name from another library or another class): the
   * hint, by key; in a list of records, the first that has the key. (A list, not a spread, so that
   * the hints stay pure data a bundler can drop.)
   */
  readonly keys?: Readonly<Record<string, string>> | readonly Readonly<Record<string, string>>[];
  /** For an options argument that is not an object: a hint from the value given, if one helps. */
  readonly notObject?: (value: unknown) => string | undefined;
}

const hint = (text: string | undefined): string => (text ? ` (${text})` : '');

/** `record[key]` when it is the record's own string, not something inherited (`toString`). */
function own(record: Readonly<Record<string, string>> | undefined, key: string): string | undefined {
  return record !== undefined && Object.prototype.hasOwnProperty.call(record, key) ? record[key] : undefined;
}

/**
 * Describes a value for an error message: `'nfc'`, `42`, `null`, `undefined`, `an object`,
 * `an array (length 2)`, `a Uint8Array`, `a function (onEvent)`.
 */
export function describeValue(value: unknown): string {
  switch (typeof value) {
    case 'string': {
      const s = value.length > 40 ? `${value.slice(0, 32)}…` : value;
      const quoted = `'${JSON.stringify(s).slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'")}'`;
      return value.length > 40 ? `${quoted} (${value.length} characters)` : quoted;
    }
    case 'number':
      return Object.is(value, -0) ? '-0' : String(value);
    case 'bigint':
      return `${value}n`;
    case 'boolean':
    case 'undefined':
      return String(value);
    case 'symbol':
      return 'a symbol';
    case 'function':
      return value.name ? `a function (${value.name})` : 'a function';
  }
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array (length ${value.length})`;
  let name: unknown;
  try {
    name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  } catch {
    // a proxy that throws: say no more than "an object"
  }
  if (typeof name !== 'string' || name === '' || name === 'Object') return 'an object';
  return `${/^[AEIO]/.test(name) ? 'an' : 'a'} ${name}`; // 'a Uint8Array', 'an ArrayBuffer'
}

/** Formats a list of allowed values: `'utf8', 'utf16' or 'grapheme'`. */
function listValues(values: readonly unknown[]): string {
  const shown = values.map((v) => (typeof v === 'string' ? describeValue(v) : String(v)));
  return shown.length === 1 ? shown[0] : `${shown.slice(0, -1).join(', ')} or ${shown[shown.length - 1]}`;
}

/**
 * The candidate `name` was most likely meant as, or undefined: the same name in another case; else
 * the one candidate that `name` (4 characters or more) begins; else the one nearest by edit
 * distance, if within a third of the name's length (at least 1).
 */
export function nearestName(name: string, candidates: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const same = candidates.find((c) => c.toLowerCase() === lower);
  if (same !== undefined) return same;
  if (lower.length >= 4) {
    const prefixed = candidates.filter((c) => c.toLowerCase().startsWith(lower));
    if (prefixed.length === 1) return prefixed[0];
  }
  let best: string | undefined;
  let bestD = Math.max(1, Math.floor(name.length / 3)) + 1;
  let tie = false;
  for (const c of candidates) {
    const dd = editDistance(lower, c.toLowerCase());
    if (dd < bestD) {
      best = c;
      bestD = dd;
      tie = false;
    } else if (dd === bestD) {
      tie = true;
    }
  }
  return tie ? undefined : best;
}

/**
 * Checks an options argument: undefined, or an object whose own keys are all in `allowed`.
 * Anything else is a TypeError that names what was given, or the unknown key with the valid ones
 * and the nearest of them (or the hint `hints.keys` has for it). Returns `options`.
 */
export function checkOptions<T>(options: T | undefined, where: string, allowed: readonly string[], hints?: OptionHints): T | undefined {
  if (options === undefined) return undefined;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${where}: options must be an object, got ${describeValue(options)}${hint(hints?.notObject?.(options))}`);
  }
  for (const key of Object.keys(options)) {
    if (allowed.includes(key)) continue;
    const keys = hints?.keys;
    let why: string | undefined;
    if (Array.isArray(keys)) {
      for (const record of keys as readonly Readonly<Record<string, string>>[]) if ((why = own(record, key)) !== undefined) break;
    } else {
      why = own(keys as Readonly<Record<string, string>> | undefined, key);
    }
    if (why === undefined) {
      const near = nearestName(key, allowed);
      if (near !== undefined) why = `did you mean '${near}'?`;
    }
    const valid = allowed.length === 0 ? 'it takes none' : `valid options: ${allowed.join(', ')}`;
    throw new TypeError(`${where}: unknown option ${describeValue(key)}${hint(why)}; ${valid}`);
  }
  return options;
}

/** A boolean option: `def` when undefined; anything but true or false is a TypeError. */
export function booleanOption(value: unknown, name: string, where: string, def: boolean): boolean {
  if (value === undefined) return def;
  if (typeof value === 'boolean') return value;
  const why = value === 'true' || value === 'false' ? `a string: give ${value} without quotes`
    : value === 0 || value === 1 ? `a number: give ${value === 1}` : undefined;
  throw new TypeError(`${where}: ${name} must be true or false, got ${describeValue(value)}${hint(why)}`);
}

/**
 * An option with a few allowed values: `def` when undefined (with `def` undefined, the value is
 * required). A value of a type none of them has is a TypeError; a value of the right type that is
 * not one of them is `invalid`'s error, with `hints[String(value)]` or the nearest allowed string.
 */
export function oneOf<const V extends string | number | boolean>(
  value: unknown,
  name: string,
  where: string,
  values: readonly V[],
  def: V | undefined,
  invalid: InvalidValue = typeError,
  hints?: Readonly<Record<string, string>>,
): V {
  if (value === undefined && def !== undefined) return def;
  if ((values as readonly unknown[]).includes(value)) return value as V;
  const message = `${where}: ${name} must be ${listValues(values)}, got ${describeValue(value)}`;
  if (!values.some((v) => typeof v === typeof value)) throw new TypeError(message);
  const key = String(value);
  let why = own(hints, key);
  if (why === undefined && typeof value === 'string') {
    const near = nearestName(value, values.filter((v): v is V & string => typeof v === 'string'));
    if (near !== undefined) why = `did you mean '${near}'?`;
  }
  throw invalid(message + hint(why));
}

/** A string option: undefined, or a string (any: written as it is, or as a JSON string); anything else is a TypeError. */
export function stringOption(value: unknown, name: string, where: string): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  throw new TypeError(`${where}: ${name} must be a string, got ${describeValue(value)}`);
}

/**
 * A count or a time in whole units: undefined, or an integer from 0 to `max` (by default
 * Number.MAX_SAFE_INTEGER). Not a number is a TypeError (with a hint for a number given as a string); a number that is not
 * such an integer (1.5, -1, NaN, Infinity, one past `max`) is `invalid`'s error.
 */
export function integerOption(value: unknown, name: string, where: string, invalid: InvalidValue = typeError, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= max) return value;
  const range = max === Number.MAX_SAFE_INTEGER ? 'a non-negative integer' : `an integer from 0 to ${max}`;
  const message = `${where}: ${name} must be ${range}, got ${describeValue(value)}`;
  if (typeof value === 'number') throw invalid(message);
  throw new TypeError(message + hint(numberHint(value)));
}

/** A callback option: undefined, or a function; anything else is a TypeError. */
export function functionOption<F extends (...args: never[]) => unknown>(value: unknown, name: string, where: string): F | undefined {
  if (value === undefined || typeof value === 'function') return value as F | undefined;
  throw new TypeError(`${where}: ${name} must be a function, got ${describeValue(value)}`);
}

const MiB = 1024 * 1024;
const bytesText = (n: number): string =>
  n >= MiB && n % MiB === 0 ? `${n} (${n / MiB} MiB)` : n >= 1024 && n % 1024 === 0 ? `${n} (${n / 1024} KiB)` : String(n);

/**
 * A limit in bytes: `def` when undefined, else an integer from 1 to `max`; with `max` Infinity,
 * also Infinity (no limit). Not a number is a TypeError; a number out of range is `invalid`'s error.
 */
export function byteLimitOption(value: unknown, name: string, where: string, def: number, max: number, invalid: InvalidValue = typeError): number {
  if (value === undefined) return def;
  if (typeof value === 'number' && ((Number.isInteger(value) && value >= 1 && value <= max) || (value === Infinity && max === Infinity))) return value;
  const range = max === Infinity ? 'a positive integer number of bytes or Infinity' : `an integer number of bytes from 1 to ${bytesText(max)}`;
  const message = `${where}: ${name} must be ${range}, got ${describeValue(value)}`;
  if (typeof value === 'number') throw invalid(message);
  throw new TypeError(message + hint(numberHint(value)));
}

/** The hint for a number given as a numeric string or a bigint, where a number was expected. */
export function numberHint(value: unknown): string | undefined {
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return `a string: give the number ${Number(value)}`;
  if (typeof value === 'bigint') return `a bigint: give the number ${Number(value)}`;
  return undefined;
}
