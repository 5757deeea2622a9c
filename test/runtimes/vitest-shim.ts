// The part of vitest's API the portable suites use (describe, it/test with .each, .runIf, .skipIf,
// expect with the matchers below), so that the same test files run on a runtime with nothing but
// the runtime: test/runtimes/build.mjs bundles them with `vitest` resolved to this file. Semantics
// follow vitest's where the suites rely on them: toEqual ignores properties whose value is
// undefined and compares arrays, typed arrays and plain objects recursively; a failed check throws.

type Fn = () => unknown;
interface Test { name: string; fn: Fn }
interface Suite { name: string; tests: Test[]; before: Fn[]; after: Fn[]; children: Suite[]; parent: Suite | null }

const root: Suite = { name: '', tests: [], before: [], after: [], children: [], parent: null };
let current = root;
let assertions = 0;

const fmt = (name: string, args: readonly unknown[]): string => {
  let i = 0;
  return name.replace(/%[sdij]/g, () => {
    const v = args[i++];
    return typeof v === 'string' ? v : JSON.stringify(v);
  });
};

type Each = <T>(rows: readonly T[]) => (name: string, fn: (...args: any[]) => unknown) => void;
function withEach(reg: (name: string, fn: any) => void): Each {
  return (rows) => (name, fn) => {
    for (const row of rows) {
      const args = Array.isArray(row) ? row : [row];
      reg(fmt(name, args), () => fn(...args));
    }
  };
}

function registerTest(name: string, fn: Fn): void { current.tests.push({ name, fn }); }
function registerSuite(name: string, fn: Fn): void {
  const s: Suite = { name, tests: [], before: [], after: [], children: [], parent: current };
  current.children.push(s);
  const prev = current;
  current = s;
  try { fn(); } finally { current = prev; }
}

const skip = (_name: string, _fn: unknown) => {};
type Reg = ((name: string, fn: any) => void) & { each: Each; runIf(c: unknown): (n: string, f: any) => void; skipIf(c: unknown): (n: string, f: any) => void; skip: typeof skip };
function api(reg: (name: string, fn: any) => void): Reg {
  return Object.assign(reg, {
    each: withEach(reg),
    runIf: (c: unknown) => (c ? reg : skip),
    skipIf: (c: unknown) => (c ? skip : reg),
    skip,
  });
}

export const it = api(registerTest);
export const test = it;
export const describe = api(registerSuite);
export const beforeAll = (fn: Fn) => { current.before.push(fn); };
export const afterAll = (fn: Fn) => { current.after.push(fn); };

// ---- expect ------------------------------------------------------------------------------------

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** expect.any, expect.stringMatching…: a value that decides what it equals. */
class Asymmetric {
  constructor(readonly name: string, readonly test: (v: unknown) => boolean) {}
  asymmetricMatch(v: unknown): boolean { return this.test(v); }
  toJSON(): string { return this.name; }
}

export function equals(a: unknown, b: unknown, subset = false): boolean {
  if (b instanceof Asymmetric) return b.asymmetricMatch(a);
  if (a instanceof Asymmetric) return a.asymmetricMatch(b);
  if (Object.is(a, b)) return true;
  if (!isObj(a) || !isObj(b)) return false;
  if (ArrayBuffer.isView(a) || ArrayBuffer.isView(b)) {
    if (!ArrayBuffer.isView(a) || !ArrayBuffer.isView(b) || a.constructor !== b.constructor) return false;
    const x = a as unknown as ArrayLike<number>;
    const y = b as unknown as ArrayLike<number>;
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!Object.is(x[i], y[i])) return false;
    return true;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => equals(v, b[i], subset));
  }
  if (a instanceof Map || b instanceof Map) {
    if (!(a instanceof Map) || !(b instanceof Map) || a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !equals(v, b.get(k), subset)) return false;
    return true;
  }
  if (a instanceof Error && b instanceof Error && a.message !== b.message) return false;
  const keys = (o: Record<string, unknown>) => Object.keys(o).filter((k) => o[k] !== undefined);
  const kb = keys(b);
  if (subset) return kb.every((k) => equals(a[k], b[k], true));
  const ka = keys(a);
  return ka.length === kb.length && kb.every((k) => Object.prototype.hasOwnProperty.call(a, k) && equals(a[k], b[k]));
}

const show = (v: unknown): string => {
  try {
    const s = JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `${x}n` : ArrayBuffer.isView(x) ? Array.from(x as unknown as ArrayLike<number>) : x));
    if (s === undefined) return String(v);
    return s.length > 400 ? `${s.slice(0, 400)}…` : s;
  } catch {
    return String(v);
  }
};

class AssertionError extends Error {
  constructor(message: string) { super(message); this.name = 'AssertionError'; }
}

function thrownBy(fn: unknown): { threw: boolean; error: unknown } {
  if (typeof fn !== 'function') throw new TypeError('expect(…).toThrow() needs a function');
  try { fn(); } catch (error) { return { threw: true, error }; }
  return { threw: false, error: undefined };
}

function throwMatches(error: unknown, want: unknown): boolean {
  if (want === undefined) return true;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof want === 'string') return message.includes(want);
  if (want instanceof RegExp) return want.test(message);
  if (typeof want === 'function') return error instanceof (want as new () => unknown);
  if (want instanceof Error) return message === want.message;
  if (want instanceof Asymmetric) return want.asymmetricMatch(error);
  return false;
}

function matchers(actual: unknown, label: string | undefined, negated: boolean) {
  const check = (pass: boolean, what: string, expected?: unknown) => {
    assertions++;
    if (pass !== negated) return;
    const exp = expected !== undefined ? ` ${show(expected)}` : '';
    throw new AssertionError(`${label ? `${label}: ` : ''}expected ${show(actual)} ${negated ? 'not ' : ''}${what}${exp}`);
  };
  return {
    toBe: (e: unknown) => check(Object.is(actual, e), 'to be', e),
    toEqual: (e: unknown) => check(equals(actual, e), 'to equal', e),
    toStrictEqual: (e: unknown) => check(equals(actual, e), 'to equal', e),
    toMatchObject: (e: unknown) => check(equals(actual, e, true), 'to match', e),
    toHaveLength: (n: number) => check((actual as { length?: number } | null)?.length === n, 'to have length', n),
    toContain: (e: unknown) => check(
      typeof actual === 'string' ? actual.includes(e as string) : Array.isArray(actual) && actual.includes(e), 'to contain', e),
    toBeGreaterThan: (n: number) => check((actual as number) > n, 'to be >', n),
    toBeGreaterThanOrEqual: (n: number) => check((actual as number) >= n, 'to be >=', n),
    toBeLessThan: (n: number) => check((actual as number) < n, 'to be <', n),
    toBeLessThanOrEqual: (n: number) => check((actual as number) <= n, 'to be <=', n),
    toBeUndefined: () => check(actual === undefined, 'to be undefined'),
    toBeDefined: () => check(actual !== undefined, 'to be defined'),
    toBeNull: () => check(actual === null, 'to be null'),
    toBeTruthy: () => check(Boolean(actual), 'to be truthy'),
    toBeFalsy: () => check(!actual, 'to be falsy'),
    toMatch: (e: string | RegExp) => check(typeof actual === 'string' && (typeof e === 'string' ? actual.includes(e) : e.test(actual)), 'to match', String(e)),
    toBeInstanceOf: (C: new (...a: any[]) => unknown) => check(actual instanceof C, `to be an instance of ${C.name}`),
    toThrow: (want?: unknown) => {
      const { threw, error } = thrownBy(actual);
      check(threw && throwMatches(error, want), threw ? `to throw ${show(want)}, threw ${String(error)}` : 'to throw');
    },
  };
}

type Matchers = ReturnType<typeof matchers>;
type Async = { [K in keyof Matchers]: (...args: Parameters<Matchers[K]>) => Promise<void> };

/** The matchers applied to what a promise settles with (`rejects`: its reason, which it must have). */
function settled(promise: unknown, label: string | undefined, want: 'resolves' | 'rejects'): Async {
  const m = matchers(undefined, label, false);
  const out: Record<string, (...args: unknown[]) => Promise<void>> = {};
  for (const name of Object.keys(m)) {
    out[name] = async (...args: unknown[]) => {
      let value: unknown;
      let rejected = false;
      try { value = await promise; } catch (e) { value = e; rejected = true; }
      if (rejected !== (want === 'rejects')) {
        assertions++;
        throw new AssertionError(`${label ? `${label}: ` : ''}expected the promise to ${want === 'rejects' ? 'reject' : 'resolve'}, it ${rejected ? `rejected with ${String(value)}` : `resolved with ${show(value)}`}`);
      }
      (matchers(value, label, false) as unknown as Record<string, (...a: unknown[]) => void>)[name](...args);
    };
  }
  return out as Async;
}

export function expect(actual: unknown, label?: string) {
  return Object.assign(matchers(actual, label, false), {
    not: matchers(actual, label, true),
    get rejects() { return settled(actual, label, 'rejects'); },
    get resolves() { return settled(actual, label, 'resolves'); },
  });
}
expect.any = (C: unknown) => new Asymmetric(`any(${(C as { name?: string }).name})`, (v) =>
  C === String ? typeof v === 'string' : C === Number ? typeof v === 'number' : C === Boolean ? typeof v === 'boolean'
    : C === BigInt ? typeof v === 'bigint' : C === Function ? typeof v === 'function' : v instanceof (C as new () => unknown));
expect.anything = () => new Asymmetric('anything', (v) => v !== null && v !== undefined);
expect.stringMatching = (re: string | RegExp) => new Asymmetric(`stringMatching(${String(re)})`, (v) =>
  typeof v === 'string' && (typeof re === 'string' ? v.includes(re) : re.test(v)));
expect.stringContaining = (t: string) => new Asymmetric(`stringContaining(${t})`, (v) => typeof v === 'string' && v.includes(t));
expect.objectContaining = (o: unknown) => new Asymmetric(`objectContaining(${show(o)})`, (v) => equals(v, o, true));

// ---- running ------------------------------------------------------------------------------------

export interface Outcome { passed: number; failed: number; assertions: number; failures: string[] }

/** Runs every registered test in order, printing failures; returns the counts. */
export async function run(log: (line: string) => void): Promise<Outcome> {
  const out: Outcome = { passed: 0, failed: 0, assertions: 0, failures: [] };
  const walk = async (s: Suite, path: string[]): Promise<void> => {
    const here = s.name ? [...path, s.name] : path;
    for (const fn of s.before) await fn();
    for (const t of s.tests) {
      const name = [...here, t.name].join(' > ');
      try {
        await t.fn();
        out.passed++;
      } catch (err) {
        out.failed++;
        out.failures.push(name);
        log(`FAIL ${name}\n  ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
      }
    }
    for (const c of s.children) await walk(c, here);
    for (const fn of s.after) await fn();
  };
  await walk(root, []);
  out.assertions = assertions;
  return out;
}
