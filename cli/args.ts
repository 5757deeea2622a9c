// Options of the command: one table per subcommand, from which both the parser and the help text
// come, so that --help lists every option with its default.
import { editDistance } from '../bindings/core/edit-distance.js';
import { UsageError } from './errors.js';

export type OptionKind = 'flag' | 'string' | 'int' | 'bytes' | 'seconds' | 'list';

export interface OptionSpec {
  name: string; // without the leading --
  kind: OptionKind;
  /** For values: the placeholder shown in the help. */
  arg?: string;
  /** The allowed values (string and list options). */
  choices?: readonly string[];
  /** The default, as the help shows it. */
  default: string;
  /** A bytes or int option's largest value. */
  max?: number;
  /** An int option's smallest value (0 when not said). */
  min?: number;
  help: string;
}

export interface CommandSpec {
  name: string;
  usage: string;
  summary: string;
  options: OptionSpec[];
  /** Positional arguments accepted (0 or 1). */
  positionals: number;
  /** Help text after the options (exit codes, examples). */
  epilog?: string;
}

export type Values = Record<string, string | number | boolean | string[] | undefined>;

// The edit distance is the library's own, bundled into the command.
export { editDistance };

/** The candidate nearest to `word` by edit distance, if near enough to be a likely typo, or one it begins. */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const dist = editDistance(w, c.toLowerCase());
    if (dist < bestD) {
      bestD = dist;
      best = c;
    }
  }
  if (best !== undefined && bestD <= Math.max(2, Math.floor(best.length / 3))) return best;
  return w.length >= 3 ? candidates.find((c) => c.toLowerCase().startsWith(w)) : undefined;
}

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, kib: 1024, m: 1024 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gib: 1024 ** 3 };

/** '16MiB', '64k', '1048576' → bytes. */
export function parseBytes(s: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(s.trim());
  if (!m || !(m[2].toLowerCase() in SIZE_UNITS)) return undefined;
  const n = Math.round(Number(m[1]) * SIZE_UNITS[m[2].toLowerCase()]);
  return Number.isSafeInteger(n) && n >= 1 ? n : undefined;
}

export function formatBytes(n: number): string {
  if (n >= 1024 ** 3 && n % 1024 ** 3 === 0) return `${n / 1024 ** 3} GiB`;
  if (n >= 1024 ** 2 && n % 1024 ** 2 === 0) return `${n / 1024 ** 2} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} B`;
}

function optionValue(spec: OptionSpec, raw: string): string | number | string[] {
  const bad = (what: string): never => {
    throw new UsageError(`--${spec.name} ${what}, got ${JSON.stringify(raw)}`);
  };
  switch (spec.kind) {
    case 'int': {
      if (!/^\d+$/.test(raw)) bad('takes a whole number');
      if (spec.max !== undefined && Number(raw) > spec.max) bad(`takes a whole number up to ${spec.max}`);
      if (spec.min !== undefined && Number(raw) < spec.min) bad(`takes a whole number of at least ${spec.min}`);
      return Number(raw);
    }
    case 'bytes': {
      const n = parseBytes(raw);
      if (n !== undefined && spec.max !== undefined && n > spec.max) bad(`takes at most ${formatBytes(spec.max)}`);
      return n ?? bad('takes a size in bytes (as 1048576, 64KiB or 16MiB)');
    }
    case 'seconds': {
      const n = Number(raw);
      if (!/^\d+(\.\d+)?$/.test(raw) || !(n > 0)) bad('takes a number of seconds greater than 0');
      return n;
    }
    case 'list': {
      const items = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
      if (items.length === 0) bad('takes a comma-separated list');
      if (spec.choices) {
        for (const it of items) {
          if (!spec.choices.includes(it)) {
            const near = nearest(it, spec.choices);
            throw new UsageError(`--${spec.name}: unknown value ${JSON.stringify(it)}${near ? `; did you mean ${near}?` : ''} (one of ${spec.choices.join(', ')})`);
          }
        }
      }
      return items;
    }
    default: {
      if (spec.choices && !spec.choices.includes(raw)) {
        const near = nearest(raw, spec.choices);
        throw new UsageError(`--${spec.name}: unknown value ${JSON.stringify(raw)}${near ? `; did you mean ${near}?` : ''} (one of ${spec.choices.join(', ')})`);
      }
      return raw;
    }
  }
}

/** Whether argv asks for help (anywhere before a `--`). */
export function wantsHelp(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}

/** Parses argv against the command's options: --name value, --name=value, flags, one FILE or -. */
export function parseArgs(cmd: CommandSpec, argv: readonly string[]): { values: Values; positionals: string[] } {
  const values: Values = {};
  const positionals: string[] = [];
  const byName = new Map(cmd.options.map((o) => [o.name, o]));
  let onlyPositionals = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!onlyPositionals && a === '--') {
      onlyPositionals = true;
      continue;
    }
    if (!onlyPositionals && a.startsWith('-') && a !== '-') {
      const eq = a.indexOf('=');
      const name = (eq >= 0 ? a.slice(0, eq) : a).replace(/^--?/, '');
      const spec = a.startsWith('--') ? byName.get(name) : undefined;
      if (!spec) {
        const near = nearest(name, cmd.options.map((o) => o.name));
        throw new UsageError(
          `unknown option ${eq >= 0 ? a.slice(0, eq) : a} for seam-stream ${cmd.name}${near ? `; did you mean --${near}?` : ''}`
            + ` (seam-stream ${cmd.name} --help lists them)`,
        );
      }
      if (spec.kind === 'flag') {
        if (eq >= 0) throw new UsageError(`--${spec.name} takes no value`);
        values[spec.name] = true;
        continue;
      }
      let raw: string;
      if (eq >= 0) raw = a.slice(eq + 1);
      else {
        if (i + 1 >= argv.length) throw new UsageError(`--${spec.name} needs a value (${spec.arg ?? 'VALUE'})`);
        raw = argv[++i];
      }
      values[spec.name] = optionValue(spec, raw);
      continue;
    }
    positionals.push(a);
  }
  if (positionals.length > cmd.positionals) {
    const extra = positionals[cmd.positionals];
    if (cmd.positionals === 0) {
      throw new UsageError(`seam-stream ${cmd.name} takes no arguments, got ${JSON.stringify(extra)}`);
    }
    throw new UsageError(`seam-stream ${cmd.name} takes one FILE (or - for standard input), got another: ${JSON.stringify(extra)}`);
  }
  return { values, positionals };
}

/** The help of a command: usage, what it does, every option with its default. */
export function helpText(cmd: CommandSpec): string {
  const left = (o: OptionSpec) => `--${o.name}${o.kind === 'flag' ? '' : ` ${o.arg ?? 'VALUE'}`}`;
  const width = Math.max(...cmd.options.map((o) => left(o).length), 10) + 2;
  const lines = [`usage: ${cmd.usage}`, '', cmd.summary, ''];
  if (cmd.options.length) {
    lines.push('options:');
    for (const o of [...cmd.options, { name: 'help', kind: 'flag', default: 'off', help: 'print this help and exit (standard input is not read)' } as OptionSpec]) {
      const choices = o.choices && o.kind !== 'list' ? ` (${o.choices.join(', ')})` : o.choices ? ` (of ${o.choices.join(', ')})` : '';
      lines.push(`  ${left(o).padEnd(width)}${o.help}${choices}; default: ${o.default}`);
    }
  }
  if (cmd.epilog) lines.push('', cmd.epilog);
  return lines.join('\n') + '\n';
}


