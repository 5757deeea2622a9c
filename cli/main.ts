// The `seam-stream` command. It loads the library by its package name, as any user does.
//   seam-stream decode [options] [FILE|-]   a model stream to its text (or events), as it commits
//   seam-stream check [options] [FILE|-]    validate a capture: UTF-8, SSE, JSON, completion
//   seam-stream demo                        what a hand-written decoder, the usual stack and seam print
//   seam-stream bench [options]             the benchmarks (from a source checkout)
import { readFileSync } from 'node:fs';
import { type CommandSpec, helpText, nearest, parseArgs, wantsHelp } from './args.js';
import { bench } from './bench.js';
import { check } from './check.js';
import { decode } from './decode.js';
import { demo } from './demo.js';
import { benchSpec, checkSpec, decodeSpec, demoSpec } from './specs.js';
import { EXIT, UsageError, describeError, exitCodeOf, exitTableText } from './errors.js';

const commands: Record<string, { spec: CommandSpec; run: (values: Record<string, unknown>, positionals: string[]) => Promise<void> | void }> = {
  decode: { spec: decodeSpec, run: (v, p) => decode(v as never, p) },
  check: { spec: checkSpec, run: (v, p) => check(v as never, p) },
  demo: { spec: demoSpec, run: (v) => demo(v as never) },
  bench: { spec: benchSpec, run: (v) => bench(v as never) },
};

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

const mainHelp = () => `usage: seam-stream COMMAND [options]   (seam-stream COMMAND --help for its options)

Streaming model responses decoded at the seams: strict UTF-8, SSE and NDJSON framing, whole graphemes in NFC.

commands:
  decode [FILE|-]   decode a captured or live stream (curl -N … | seam-stream decode) and print its text as it commits
  check [FILE|-]    validate a capture without printing its text: UTF-8, SSE, JSON, completion, counts
  demo              one multilingual model stream cut at the nastiest bytes, through three consumers side by side
  bench             the benchmarks against the usual alternatives (from a source checkout)
  help [COMMAND]    this help, or a command's

options:
  --help, -h        print the help and exit; default: off
  --version, -V     print the version (${version()}) and exit; default: off

${exitTableText()}
`;

async function main(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  if (cmd === undefined || cmd === '--help' || cmd === '-h') {
    process.stdout.write(mainHelp());
    if (cmd === undefined) process.exitCode = EXIT.USAGE;
    return;
  }
  if (cmd === '--version' || cmd === '-V') {
    process.stdout.write(`${version()}\n`);
    return;
  }
  if (cmd === 'help') {
    const sub = rest[0];
    if (sub === undefined) process.stdout.write(mainHelp());
    else if (sub in commands) process.stdout.write(helpText(commands[sub].spec));
    else throw new UsageError(unknownCommand(sub));
    return;
  }
  const c = commands[cmd];
  if (!c) throw new UsageError(cmd.startsWith('-') ? unknownMainOption(cmd) : unknownCommand(cmd));
  if (wantsHelp(rest)) {
    // help after a command prints it, and neither runs the command nor reads standard input
    process.stdout.write(helpText(c.spec));
    return;
  }
  const { values, positionals } = parseArgs(c.spec, rest);
  await c.run(values, positionals);
}

function unknownCommand(cmd: string): string {
  const near = nearest(cmd, [...Object.keys(commands), 'help']);
  return `unknown command ${JSON.stringify(cmd)}${near ? `; did you mean ${near}?` : ''} (seam-stream --help lists them)`;
}

function unknownMainOption(opt: string): string {
  const near = nearest(opt.replace(/^--?/, ''), ['help', 'version']);
  return `unknown option ${opt}${near ? `; did you mean --${near}?` : ''} (a command's options follow it: seam-stream decode --help)`;
}

try {
  await main(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`seam-stream: ${describeError(e)}\n`);
  if (process.env.SEAM_DEBUG) process.stderr.write(`${(e as Error)?.stack}\n`);
  process.exit(exitCodeOf(e));
}
