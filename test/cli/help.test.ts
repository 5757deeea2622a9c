// --help, --version, and mistakes on the command line.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_TEXT_BYTES, MAX_LIMIT_BYTES } from '../../bindings/index.js';
import { editDistance, formatBytes, nearest, parseArgs, parseBytes } from '../../cli/args.js';
import { COMMAND_SPECS, limitOptions } from '../../cli/specs.js';
import { noStack, root, run, start } from './helpers.js';

describe('help', () => {
  for (const spec of COMMAND_SPECS) {
    it(`seam-stream ${spec.name} --help lists every option with its default, without reading standard input`, async () => {
      // standard input stays open: a command that read it would not end
      const d = start([spec.name, '--help'], { stdin: 'open', timeoutMs: 10_000 });
      const r = await d.done;
      d.child.stdin!.destroy();
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout.startsWith(`usage: ${spec.usage}\n`)).toBe(true);
      const optionLines = r.stdout.split('\n').filter((l) => /^ {2}--/.test(l));
      expect(optionLines.map((l) => l.trim().split(/\s/)[0])).toEqual([...spec.options.map((o) => `--${o.name}`), '--help']);
      for (const o of spec.options) {
        const line = optionLines.find((l) => l.trim().startsWith(`--${o.name} `) || l.trim() === `--${o.name}`)!;
        expect(line, o.name).toContain(`; default: ${o.default}`);
      }
      // the help after other options too, and `help COMMAND`
      expect((await run([spec.name, '--format', 'openai', '-h'], { stdin: 'open', timeoutMs: 10_000 }).catch(() => null))?.stdout).toBe(r.stdout);
      expect((await run(['help', spec.name])).stdout).toBe(r.stdout);
    });
  }

  it('the largest limits taken are the library\'s', () => {
    expect(limitOptions.map((o) => o.max)).toEqual([MAX_LIMIT_BYTES, MAX_LIMIT_BYTES, undefined]);
  });

  it('the limits shown as defaults are the library\'s', () => {
    expect(limitOptions.map((o) => [o.name, o.default])).toEqual([
      ['max-event-bytes', formatBytes(DEFAULT_MAX_EVENT_BYTES)],
      ['max-line-bytes', formatBytes(DEFAULT_MAX_LINE_BYTES)],
      ['max-text-bytes', formatBytes(DEFAULT_MAX_TEXT_BYTES)],
    ]);
  });

  it('seam-stream --help lists the commands and the exit codes; no command prints it too (exit 1)', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    for (const name of ['decode [FILE|-]', 'check [FILE|-]', 'demo', 'bench', 'help [COMMAND]']) expect(r.stdout).toContain(`\n  ${name}`);
    for (const code of [0, 1, 2, 3, 4, 5, 6, 7, 8, 130]) expect(r.stdout).toMatch(new RegExp(`\\n +${code}  `));
    const none = await run([]);
    expect({ code: none.code, stdout: none.stdout }).toEqual({ code: 1, stdout: r.stdout });
  });

  it('--version prints the version from package.json', async () => {
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    for (const flag of ['--version', '-V']) {
      const r = await run([flag]);
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
  });
});

describe('mistakes on the command line: exit 1, one line naming the nearest valid spelling', () => {
  const cases: [string[], string][] = [
    [['decod'], 'seam-stream: unknown command "decod"; did you mean decode? (seam-stream --help lists them)\n'],
    [['chek', 'x'], 'seam-stream: unknown command "chek"; did you mean check? (seam-stream --help lists them)\n'],
    [['benhc'], 'seam-stream: unknown command "benhc"; did you mean bench? (seam-stream --help lists them)\n'],
    [['frobnicate'], 'seam-stream: unknown command "frobnicate" (seam-stream --help lists them)\n'],
    [['--verison'], 'seam-stream: unknown option --verison; did you mean --version? (a command\'s options follow it: seam-stream decode --help)\n'],
    [['decode', '--fromat', 'openai'], 'seam-stream: unknown option --fromat for seam-stream decode; did you mean --format? (seam-stream decode --help lists them)\n'],
    [['decode', '--idle'], 'seam-stream: unknown option --idle for seam-stream decode; did you mean --idle-timeout? (seam-stream decode --help lists them)\n'],
    [['bench', '--rouns', '1'], 'seam-stream: unknown option --rouns for seam-stream bench; did you mean --rounds? (seam-stream bench --help lists them)\n'],
    [['decode', '--format', 'antrhopic'], 'seam-stream: --format: unknown value "antrhopic"; did you mean anthropic? (one of openai, openai-responses, anthropic, ollama, ddg, gemini, bedrock, bedrock-invoke, sse, ndjson, lines, text)\n'],
    [['decode', '--max-event-bytes', 'lots'], 'seam-stream: --max-event-bytes takes a size in bytes (as 1048576, 64KiB or 16MiB), got "lots"\n'],
    [['decode', '--max-event-bytes', '1GiB'], 'seam-stream: --max-event-bytes takes at most 512 MiB, got "1GiB"\n'],
    [['check', '--max-line-bytes=513MiB'], 'seam-stream: --max-line-bytes takes at most 512 MiB, got "513MiB"\n'],
    [['decode', '--idle-timeout', '0'], 'seam-stream: --idle-timeout takes a number of seconds greater than 0, got "0"\n'],
    [['decode', '--save'], 'seam-stream: --save needs a value (FILE)\n'],
    // (the core reads a choice as a 32-bit signed integer: 4294967296 was followed as choice 0, its text printed)
    [['decode', '--choice', '4294967296'], 'seam-stream: --choice takes a whole number up to 2147483647, got "4294967296"\n'],
    [['check', '--choice=2147483648'], 'seam-stream: --choice takes a whole number up to 2147483647, got "2147483648"\n'],
    [['decode', 'a', 'b'], 'seam-stream: seam-stream decode takes one FILE (or - for standard input), got another: "b"\n'],
    [['decode', '--events', '--format', 'text'], 'seam-stream: --events needs a stream of events: plain text (--format text) has none\n'],
    [['bench', '--only', 'utf9'], 'seam-stream: --only: unknown value "utf9"; did you mean utf8? (one of utf8, sse, text)\n'],
    [['demo', 'extra'], 'seam-stream: seam-stream demo takes no arguments, got "extra"\n'],
  ];
  for (const [args, message] of cases) {
    it(args.join(' '), async () => {
      const r = await run(args, { stdin: 'open', timeoutMs: 10_000 });
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 1, stdout: '', stderr: message });
      expect(noStack(r.stderr)).toBe(true);
    });
  }

  it('the parts: edit distance, nearest, sizes', () => {
    expect([editDistance('fromat', 'format'), editDistance('decod', 'decode'), editDistance('', 'abc'), editDistance('abc', 'abc')]).toEqual([1, 1, 3, 0]);
    expect([nearest('jsn', ['json', 'save']), nearest('zzzzzz', ['json', 'save']), nearest('max-ev', ['max-event-bytes', 'max-line-bytes'])]).toEqual(['json', undefined, 'max-event-bytes']);
    expect(['64', '64KiB', '64k', '16MiB', '1.5k', '1G', '0', 'x', '-1', '1 TiB'].map(parseBytes)).toEqual([64, 65536, 65536, 16777216, 1536, 1073741824, undefined, undefined, undefined, undefined]);
    const spec = COMMAND_SPECS.find((s) => s.name === 'decode')!;
    expect(parseArgs(spec, ['--format=ollama', '-', '--max-line-bytes=1k'])).toEqual({
      values: { format: 'ollama', 'max-line-bytes': 1024 }, positionals: ['-'],
    });
    expect(parseArgs(spec, ['--', '--weird-name'])).toEqual({ values: {}, positionals: ['--weird-name'] });
  });
});
