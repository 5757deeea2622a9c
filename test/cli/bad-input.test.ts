// Bad input ends with one clear message and the documented exit code, never a stack trace.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { file, noStack, prng, run, start, tempDir, writer, writerScript } from './helpers.js';

let dir: string;
beforeAll(() => {
  dir = tempDir();
});

/** Reports the command's peak resident set at exit, from inside it (process.resourceUsage). */
const RSS_HOOK = 'data:text/javascript,process.on("exit",()=>process.stderr.write("maxRSS "+process.resourceUsage().maxRSS+"\\n"))';

/** The command reading `bytes` of one line (after `prefix`) from a writer child, and its peak RSS in KiB. */
async function longLine(prefix: string, bytes: number, args: string[]) {
  const w = spawn(process.execPath, [writerScript, '--long-line', prefix, String(bytes)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const r = await run(args, { stdin: w, nodeArgs: ['--import', RSS_HOOK], timeoutMs: 60_000 });
  w.kill();
  const m = /\nmaxRSS (\d+)\n$/.exec(`\n${r.stderr}`);
  return { ...r, rssKiB: m ? Number(m[1]) : NaN, message: r.stderr.replace(/maxRSS \d+\n$/, '') };
}

const GiB = 1024 ** 3;

describe('bad input', () => {
  it('binary garbage: exit 2 naming the offset of the first invalid byte; the text before it printed', async () => {
    const seed = 4242;
    const next = prng(seed);
    const garbage = Buffer.from(Array.from({ length: 2048 }, () => Math.floor(next() * 256)));
    const r = await run(['decode', file(dir, 'garbage.bin', garbage)]);
    expect(r.code, `seed ${seed}`).toBe(2);
    const m = /^seam-stream: (?:Invalid|Truncated) UTF-8 at byte offset (\d+) \(bytes from there: [0-9A-F ]+\) \(--lenient reads it as U\+FFFD and goes on\)\n$/.exec(r.stderr)
      ?? /^seam-stream: Truncated UTF-8: the stream ended inside a character that starts at byte offset (\d+)/.exec(r.stderr);
    expect(m, r.stderr).not.toBeNull();
    const at = Number(m![1]);
    // independently: the bytes before the offset are valid UTF-8, and they are what was printed (graphemes whole, NFC)
    const before = new TextDecoder('utf-8', { fatal: true }).decode(garbage.subarray(0, at));
    expect(r.stdout).toBe(before.normalize('NFC'));
    expect(() => new TextDecoder('utf-8', { fatal: true }).decode(garbage.subarray(0, at + 4))).toThrow();
    expect(noStack(r.stderr)).toBe(true);
    const c = await run(['check', file(dir, 'garbage.bin', garbage)]);
    expect(c.code).toBe(2);
  });

  it('a capture saved as UTF-16 (PowerShell\'s >): exit 2, said to be UTF-16 with what to do, not to read it leniently', async () => {
    const sse = 'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n';
    const said = ': the input is UTF-16 (it begins with the byte order mark FF FE), not UTF-8 as streams are; save the capture as it came (curl -o FILE; PowerShell\'s > writes UTF-16), or convert it (iconv -f UTF-16 -t UTF-8)';
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(sse, 'utf16le')]);
    for (const args of [[], ['--format', 'openai']]) {
      const r = await run(['decode', ...args], { input: bytes });
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 2, stdout: '', stderr: `seam-stream: Invalid UTF-8 at byte offset 0 (bytes from there: FF FE 64 00)${said}\n` });
    }
    const c = await run(['check', '--json'], { input: bytes });
    expect(JSON.parse(c.stdout).problems[0]).toEqual({ kind: 'utf8', offset: 0, message: `invalid UTF-8 at byte 0${said}` });
  });

  it('an empty file: exit 3, "is empty"', async () => {
    const f = file(dir, 'empty.sse', '');
    const r = await run(['decode', f]);
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 3, stdout: '', stderr: `seam-stream: ${f} is empty (0 bytes): there is no stream to decode\n` });
    const s = await run(['decode', '--format', 'anthropic', f]);
    expect({ code: s.code, stderr: s.stderr }).toEqual({ code: 3, stderr: 'seam-stream: The stream ended without its completion (a message_stop event) after 0 bytes: the text is incomplete\n' });
    const t = await run(['decode', '--format', 'text', f]);
    expect({ code: t.code, stdout: t.stdout, stderr: t.stderr }).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('a 1 GiB line through a pipe: a limit error (exit 4) after 16 MiB, memory bounded', async () => {
    const sse = await longLine('data: ', GiB, ['decode']);
    expect(sse.code).toBe(4);
    expect(sse.message).toBe('seam-stream: Server-sent event exceeds maxEventBytes (16777216 bytes) at the line starting at byte offset 0; nothing past the limit was buffered (raise it with --max-event-bytes)\n');
    expect(sse.rssKiB).toBeLessThan(300 * 1024);
    const lines = await longLine('', GiB, ['decode', '--format', 'lines']);
    expect(lines.code).toBe(4);
    expect(lines.message).toBe('seam-stream: Line starting at byte offset 0 is longer than maxLineBytes (16777216 bytes); nothing past the limit was buffered (raise it with --max-line-bytes)\n');
    expect(lines.rssKiB).toBeLessThan(300 * 1024);
    // plain text has no lines: the text itself is the limit (it is kept for the report), here 32 MiB
    const text = await longLine('', GiB, ['decode', '--max-text-bytes', '32MiB']);
    expect(text.code).toBe(4);
    expect(text.message).toMatch(/^seam-stream: committing \d+ more bytes would pass maxTextBytes \(33554432 bytes, \d+ committed\); the delta was not taken \(raise it with --max-text-bytes\)\n$/);
    expect(text.stdout.length).toBeGreaterThan(32 * 1024 * 1024 - 65536);
    expect(text.rssKiB).toBeLessThan(300 * 1024);
  });

  it('check of 600 MiB of plain text through a pipe: the limit (exit 4), every grapheme counted, memory bounded (it kept the whole text and failed, "internal error: Invalid string length", exit 1)', async () => {
    const n = 600 * 1024 * 1024;
    const c = await longLine('', n, ['check', '--json', '--format', 'text', '--max-text-bytes', '32MiB', '-']);
    expect({ code: c.code, message: c.message }).toEqual({ code: 4, message: '' });
    const r = JSON.parse(c.stdout);
    expect([r.bytes, r.graphemes, r.utf8Bytes, r.problems]).toEqual([n, n, n, [{ kind: 'limit', offset: 32 * 1024 * 1024 + 1, message: 'the text would pass --max-text-bytes (33554432 bytes) at byte 33554433: decode stops there' }]]);
    expect(c.rssKiB).toBeLessThan(400 * 1024);
  }, 120_000);

  it('check counts the graphemes of a text of many times 16 Mi UTF-16 units as decode does (its counting layer is renewed every 16 Mi units, from the cluster it held)', async () => {
    const unit = 'e\u0301👍🏽🇫🇷a\r\nक्षि👨‍👩‍👧 ';
    const f = file(dir, 'mixed.txt', unit.repeat(Math.ceil(40e6 / unit.length)));
    const c = JSON.parse((await run(['check', '--json', '--format', 'text', '--max-text-bytes', '512MiB', f], { timeoutMs: 60_000 })).stdout);
    const d = await run(['decode', '--report', '--json', '--format', 'text', '--max-text-bytes', '512MiB', f], { timeoutMs: 60_000 });
    const report = JSON.parse(d.stderr);
    expect([c.exitCode, c.graphemes, c.utf8Bytes]).toEqual([0, report.graphemes, report.utf8Bytes]);
    expect(c.graphemes).toBe(12_307_696);
  }, 120_000);

  it('a line of ollama or ddg past --max-line-bytes: named in that option\'s words, as for the other line formats and by check', async () => {
    for (const [format, line] of [['ollama', '{"model":"m","message":{"role":"assistant","content":"hello there"},"done":false}\n'], ['ddg', 'data: {"message":"hello there, a long line"}\n']]) {
      const d = await run(['decode', '--format', format, '--max-line-bytes', '32'], { input: line });
      expect({ format, code: d.code, stderr: d.stderr }).toEqual({ format, code: 4, stderr: 'seam-stream: Line starting at byte offset 0 is longer than maxLineBytes (32 bytes); nothing past the limit was buffered (raise it with --max-line-bytes)\n' });
      const c = await run(['check', '--json', '--format', format, '--max-line-bytes', '32'], { input: line });
      expect(JSON.parse(c.stdout).problems[0].message).toBe('Line starting at byte offset 0 is longer than maxLineBytes (32 bytes); nothing past the limit was buffered: framing stopped there');
    }
  });

  it('paths that cannot be read: no such file, a directory, a symbolic link loop (and no permission, when not root)', async () => {
    const cases: [string, string][] = [[join(dir, 'missing.sse'), 'no such file'], [dir, 'it is a directory']];
    const loop = join(dir, 'loop');
    symlinkSync(loop, loop);
    cases.push([loop, 'too many symbolic links']);
    if (process.getuid?.() !== 0) {
      const locked = file(dir, 'locked.sse', 'data: x\n\n');
      chmodSync(locked, 0);
      cases.push([locked, 'permission denied']);
    }
    const sub = join(dir, 'sub');
    mkdirSync(sub);
    for (const [path, why] of cases) {
      for (const cmd of ['decode', 'check']) {
        const r = await run([cmd, path]);
        expect({ cmd, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ cmd, code: 1, stdout: '', stderr: `seam-stream: cannot read ${path}: ${why}\n` });
      }
    }
  });

  it('an error body with no `error` member (AWS\'s, a proxy\'s) is the provider\'s error, not an answer: exit 5, nothing printed', async () => {
    const cases: [string, string, string][] = [
      ['{"message":"The security token included in the request is invalid."}', 'openai', 'The security token included in the request is invalid.'],
      ['{"Message":"User is not authorized","__type":"AccessDeniedException"}\n', 'bedrock', 'User is not authorized (AccessDeniedException)'],
      ['{"detail":"Not Found"}\n', 'openai', 'Not Found'],
      ['{"message":"Too many requests","type":"rate_limit"}', 'openai', 'Too many requests (rate_limit)'],
    ];
    for (const [body, format, said] of cases) {
      const r = await run(['decode'], { input: body });
      expect({ body, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ body, code: 5, stdout: '', stderr: `seam-stream: The provider answered with an error body: ${said}\n` });
      const c = await run(['check', '--json'], { input: body });
      expect({ body, code: c.code, result: JSON.parse(c.stdout) }).toMatchObject({ body, code: 5, result: { format, problems: [{ kind: 'provider', offset: 0, message: `the provider answered with an error body: ${said}` }] } });
    }
    // a ddg event (a line of it, without its `data: `) is still one
    const d = await run(['decode', '--report', '--json'], { input: '{"role":"assistant","message":"Hi","action":"success"}\n[DONE]\n' });
    expect({ code: d.code, stdout: d.stdout, format: JSON.parse(d.stderr).format }).toEqual({ code: 0, stdout: 'Hi', format: 'ddg' });
  });

  it('an HTML page in place of a stream (a proxy\'s 502 page, curl without -i): the server\'s answer (exit 5), not text; with --format, said after the error', async () => {
    const page = '<!DOCTYPE html>\n<html>\n<head><title>502 Bad Gateway</title></head>\n<body><center><h1>502 Bad Gateway</h1></center><hr><center>cloudflare</center></body>\n</html>\n';
    const said = 'an HTML page ("502 Bad Gateway"), not a stream: a server\'s or a proxy\'s error page, most likely';
    const path = file(dir, 'page.html', page);
    const d = await run(['decode', path]);
    expect({ code: d.code, stdout: d.stdout, stderr: d.stderr }).toEqual({ code: 5, stdout: '', stderr: `seam-stream: the input is ${said} (--format text reads it as text)\n` });
    const w = await run(['decode', '-'], { stdin: writer(path, [1, 2, 3, 5, 8, 13, 40], 1) });
    expect({ code: w.code, stdout: w.stdout, stderr: w.stderr }).toEqual({ code: 5, stdout: '', stderr: d.stderr });
    // (a first read shorter than the page's first tag, or that ends before its title: told apart all the same, the title the whole page's)
    for (const at of [1, 5, 20]) {
      const s = start(['decode', '-'], { stdin: 'open' });
      s.child.stdin!.write(page.slice(0, at));
      await new Promise((r) => setTimeout(r, 300));
      s.child.stdin!.end(page.slice(at));
      const r = await s.done;
      expect({ at, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ at, code: 5, stdout: '', stderr: d.stderr });
    }
    const f = await run(['decode', '--format', 'anthropic', path]);
    expect({ code: f.code, stdout: f.stdout, stderr: f.stderr }).toEqual({
      code: 3, stdout: '',
      stderr: `seam-stream: The stream ended without its completion (a message_stop event) after ${page.length} bytes: the text is incomplete\nseam-stream: the input looks like ${said}\n`,
    });
    const t = await run(['decode', '--format', 'text', path]);
    expect({ code: t.code, stdout: t.stdout, stderr: t.stderr }).toEqual({ code: 0, stdout: page, stderr: '' });
    const c = await run(['check', '--json', path]);
    expect({ code: c.code, result: JSON.parse(c.stdout) }).toMatchObject({ code: 5, result: { format: null, problems: [{ kind: 'provider', offset: 0, message: `the input is ${said} (--format text reads it as text)` }] } });
  });

  it('a --save path that cannot be written: said before the stream is read (a live one is not read to its end first), exit 1', async () => {
    const sub = join(dir, 'save-to');
    mkdirSync(sub);
    const notDir = file(dir, 'plain-file', 'x');
    const cases: [string, string][] = [[join(dir, 'no-such-dir', 'out.txt'), 'no such file'], [sub, 'it is a directory'], [join(notDir, 'out.txt'), 'a part of the path is not a directory']];
    for (const [path, why] of cases) {
      // standard input is left open: the command must not wait for it
      const r = await run(['decode', '--save', path], { stdin: 'open', timeoutMs: 10_000 });
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 1, stdout: '', stderr: `seam-stream: cannot save ${path}: ${why}\n` });
    }
  });
});
