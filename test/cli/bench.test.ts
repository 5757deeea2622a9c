// `seam-stream bench` on a tiny selection (one row, one round): progress, the table, JSON, SVG, and
// the rewrite of a Markdown file's generated section.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { MARK_END, MARK_START, replaceSection, runtimeKey, runtimeMarks } from '../../cli/bench.js';
import { file, noStack, root, run, tempDir } from './helpers.js';

let dir: string;
beforeAll(() => {
  dir = tempDir();
});

const TINY = ['--only', 'utf8', '--corpus', 'ascii', '--chunk', '64', '--rounds', '1', '--max-time', '0.02'];

describe('bench', () => {
  it('one row, one round: each row printed once with the rows and time left, the table at the end, JSON, SVG, the Markdown section', async () => {
    const md = file(dir, 'B.md', `# Benchmarks\n\nprose before\n\n${MARK_START}\n\nold table\n\n${MARK_END}\n\nprose after\n`);
    const json = join(dir, 'r.json');
    const svg = join(dir, 'r.svg');
    const r = await run(['bench', ...TINY, '--json', json, '--svg', svg, '--write', md], { timeoutMs: 20_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.ms).toBeLessThan(20_000);
    expect(noStack(r.stderr)).toBe(true);
    const rowLines = r.stderr.split('\n').filter((l) => l.startsWith('  ['));
    expect(rowLines).toHaveLength(1);
    expect(rowLines[0]).toMatch(/^ {2}\[1\/1\] UTF-8 · push \(strict\) · ASCII SSE · 64 B: \d+\.\d\d× TextDecoder fatal, stream \([\d.]+ vs [\d.]+ MB\/s\) · 0 rows left, done$/);
    expect(r.stderr).toContain('seam-stream bench: 1 row to time\n');
    const { meta, rows } = JSON.parse(readFileSync(json, 'utf8'));
    expect({ mode: meta.mode, rounds: meta.rounds, maxTime: meta.maxTime, core: meta.core, node: meta.node, runtime: meta.runtime }).toEqual({ mode: 'quick', rounds: 1, maxTime: 0.02, core: 'simd', node: process.version, runtime: `Node ${process.versions.node}` });
    expect(rows).toHaveLength(1);
    const [row] = rows;
    expect({ ...row, seam: 0, peer: 0, ratio: 0 }).toEqual({ layer: 'UTF-8', case: 'push (strict)', corpus: 'ASCII SSE', chunk: '64 B', peerName: 'TextDecoder fatal, stream', seam: 0, peer: 0, ratio: 0 });
    expect(row.ratio).toBeGreaterThan(0);
    expect(row.ratio).toBeCloseTo(row.seam / row.peer, 10); // one round: the ratio of the two rates
    // the table: the header line and exactly this row, with the JSON's numbers
    const tableRows = r.stdout.split('\n').filter((l) => l.startsWith('| UTF-8'));
    const ratioText = row.ratio.toFixed(2).replace('.', '\\.');
    const rowPattern = new RegExp(`^\\| UTF-8 \\| push \\(strict\\) \\| ASCII SSE \\| 64 B \\| [\\d.]+ \\| TextDecoder fatal, stream \\| [\\d.]+ \\| \\*\\*${ratioText}×\\*\\* \\|$`);
    expect(tableRows).toHaveLength(1);
    expect(tableRows[0]).toMatch(rowPattern);
    expect(r.stdout.startsWith(`Node ${process.versions.node}, V8 ${process.versions.v8}, `)).toBe(true);
    expect(r.stdout).toMatch(/, core: simd, string routes: Utf8Decoder (core|split \(the platform from \d+ B(: isUtf8 \+ utf8Slice(, TextDecoder from \d+ B)?)?\)), lines and SSE (core|textdecoder), Utf8Validator (core|by buffer\.isUtf8 from \d+ B), SSE reads validated (by the core|by the platform from \d+ B), short strings to 32 units; eventsource-parser \d+\.\d+\.\d+; quick run/);
    // eventsource-parser 4 where its engines allow (Node >= 22.12), 3.1.1 on Node 20
    const [major, minor] = process.versions.node.split('.').map(Number);
    expect(r.stdout).toContain(`; eventsource-parser ${major > 22 || (major === 22 && minor >= 12) ? '4.1.3' : '3.1.1'}; quick run`);
    expect(r.stderr.startsWith(`seam-stream bench: quick mode on Node ${process.versions.node}; `)).toBe(true);
    expect(r.stdout).toContain('quick run (1 interleaved rounds × 0.02 s per contender)');
    // the chart: one bar, its label and value
    const chart = readFileSync(svg, 'utf8');
    expect(chart.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(chart.endsWith('</svg>\n')).toBe(true);
    expect(chart.match(/<rect x="[\d.]+" y="\d+" width="[\d.]+" height="16"/g)).toHaveLength(1);
    expect(chart).toContain('>UTF-8 push (strict) · ASCII SSE · 64 B vs TextDecoder fatal, stream</text>');
    expect(chart).toContain(`>${row.ratio >= 10 ? row.ratio.toFixed(1) : row.ratio.toFixed(2)}×</text>`);
    // the Markdown file: its section replaced, everything else as it was
    const doc = readFileSync(md, 'utf8');
    expect(doc.startsWith(`# Benchmarks\n\nprose before\n\n${MARK_START}\n\nNode ${process.versions.node}, `)).toBe(true);
    expect(doc.endsWith(`${MARK_END}\n\nprose after\n`)).toBe(true);
    expect(doc).not.toContain('old table');
    expect(doc).toContain(tableRows[0]);
  });

  it("BENCHMARKS.md has its generated section: a rewrite keeps the rest byte for byte", () => {
    const doc = readFileSync(join(root, 'BENCHMARKS.md'), 'utf8');
    const a = doc.indexOf(MARK_START) + MARK_START.length;
    const b = doc.indexOf(MARK_END);
    expect(a).toBeGreaterThan(MARK_START.length);
    expect(b).toBeGreaterThan(a);
    const out = replaceSection(doc, '| new |', 'BENCHMARKS.md');
    expect(out).toBe(`${doc.slice(0, a)}\n\n| new |\n\n${doc.slice(b)}`);
    expect(doc.slice(a, b)).toContain('| layer | case | corpus | chunk | seam MB/s | peer | peer MB/s | ratio |');
  });

  it("a runtime's own section (node24, bun, deno) is rewritten where the file has one, else the main section", () => {
    const m = runtimeMarks('bun');
    expect(runtimeKey()).toBe(`node${process.versions.node.split('.')[0]}`);
    const doc = `# B\n\n${MARK_START}\n\nmain\n\n${MARK_END}\n\n## Bun\n\n${m.start}\n\nold bun\n\n${m.end}\n`;
    expect(replaceSection(doc, '| bun |', 'B.md', 'bun')).toBe(`# B\n\n${MARK_START}\n\nmain\n\n${MARK_END}\n\n## Bun\n\n${m.start}\n\n| bun |\n\n${m.end}\n`);
    expect(replaceSection(doc, '| deno |', 'B.md', 'deno')).toBe(`# B\n\n${MARK_START}\n\n| deno |\n\n${MARK_END}\n\n## Bun\n\n${m.start}\n\nold bun\n\n${m.end}\n`);
  });

  it('mistakes stop it before anything is timed', async () => {
    const plain = file(dir, 'plain.md', '# no markers\n');
    const cases: [string[], string][] = [
      [[...TINY, '--write', plain], `seam-stream: cannot rewrite ${plain}: it has no generated section (the lines ${MARK_START} and ${MARK_END})\n`],
      [[...TINY, '--write', join(dir, 'nope.md')], `seam-stream: cannot rewrite ${join(dir, 'nope.md')}: no such file\n`],
      [['--quick', '--full'], 'seam-stream: --quick and --full are two modes: give one\n'],
      [['--chunk', 'big'], 'seam-stream: --chunk takes read sizes in bytes (as 64, 1KiB, 16384), got "big"\n'],
      // (the files the results go to: said before the run, whose results were lost at its end)
      [[...TINY, '--json', join(dir, 'no-such-folder', 'r.json')], `seam-stream: cannot save ${join(dir, 'no-such-folder', 'r.json')}: no such file\n`],
      [[...TINY, '--svg', dir], `seam-stream: cannot save ${dir}: it is a directory\n`],
      // (no round: its table was of NaN)
      [[...TINY, '--rounds', '0'], 'seam-stream: --rounds takes a whole number of at least 1, got "0"\n'],
    ];
    for (const [args, message] of cases) {
      const r = await run(['bench', ...args]);
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 1, stdout: '', stderr: message });
    }
    const none = await run(['bench', '--only', 'utf8', '--corpus', 'klingon', '--rounds', '1']);
    expect(none.code).toBe(1);
    expect(none.stderr.endsWith('seam-stream: no benchmark rows match these options (--corpus names: ascii, chinese, emoji, mixed, openai, anthropic, one, english; --chunk: 16, 64, 1KiB, 16KiB)\n')).toBe(true);
  });
});
