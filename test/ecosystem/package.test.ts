// The built package as users load it: ESM import and CommonJS require of 'seam-stream' by name (the
// package references itself through its exports map), the types entry, and the CLI.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(__dirname, '..', '..');
const run = (args: string[], input?: string) =>
  execFileSync(process.execPath, args, { cwd: root, input, encoding: 'utf8', env: { ...process.env, SEAM_WASM: '' } });

const script = `
  const bytes = new TextEncoder().encode('data: {"t":"世界 😀"}\\r\\n\\r\\n');
  const d = new m.Utf8Decoder();
  const p = new m.SseParser();
  const events = [];
  for (let i = 0; i < bytes.length; i++) events.push(...p.push(bytes.subarray(i, i + 1)));
  const a = new m.TextAssembler();
  a.push('e\\u0301');
  console.log(JSON.stringify({
    text: d.push(bytes.subarray(0, 11)) + d.push(bytes.subarray(11)) + d.flush(),
    events, backend: m.wasmBackend(), report: a.finish().text,
    exports: Object.keys(m).sort().join(','),
  }));`;

describe('the built package', () => {
  it('has been built', () => {
    for (const f of ['dist/index.js', 'dist/index.cjs', 'dist/index.node.js', 'dist/index.d.ts', 'dist/index.d.cts', 'dist/cli.js']) {
      expect(existsSync(join(root, f)), f).toBe(true);
    }
  });

  const expected = {
    text: 'data: {"t":"世界 😀"}\r\n\r\n',
    events: [{ type: 'message', data: '{"t":"世界 😀"}', id: '' }],
    backend: 'simd',
    report: 'é',
  };

  it('imports as ESM by name, with no init call', () => {
    const out = JSON.parse(run(['--input-type=module', '-e', `import * as m from 'seam-stream';${script}`]));
    expect({ ...out, exports: undefined }).toEqual({ ...expected, exports: undefined });
    for (const name of ['Utf8Decoder', 'Utf8DecodeError', 'Utf8DecoderStream', 'LineDecoder', 'NdjsonDecoder', 'SseParser',
      'encodeSse', 'GraphemeCommitter', 'NfcCommitter', 'TextAssembler', 'countText', 'convertOffset',
      'LineDecoderStream', 'SseDecoderStream']) {
      expect(out.exports.split(','), name).toContain(name);
    }
  });

  it('requires as CommonJS by name, synchronously', () => {
    const out = JSON.parse(run(['-e', `const m = require('seam-stream');${script}`]));
    expect({ ...out, exports: undefined }).toEqual({ ...expected, exports: undefined });
  });

  it('is one implementation in Node behind import and require: the same classes, instanceof across both', () => {
    const out = JSON.parse(run(['--input-type=module', '-e', `
      import * as esm from 'seam-stream';
      import { createRequire } from 'node:module';
      const cjs = createRequire(import.meta.url)('seam-stream');
      const caught = (m) => { try { new m.Utf8Decoder().push(new Uint8Array([0x61, 0xff])); } catch (e) { return e; } };
      const fromCjs = caught(cjs);
      const fromEsm = caught(esm);
      console.log(JSON.stringify({
        esmNames: Object.keys(esm).sort(),
        cjsNames: Object.keys(cjs).sort(),
        differ: Object.keys(cjs).filter((k) => esm[k] !== cjs[k]),
        sameSseParser: esm.SseParser === cjs.SseParser,
        cjsErrorIsEsmClass: fromCjs instanceof esm.Utf8DecodeError,
        esmErrorIsCjsClass: fromEsm instanceof cjs.Utf8DecodeError,
        sameErrorClass: fromCjs.constructor === fromEsm.constructor,
        code: fromEsm.code, offset: fromEsm.offset, text: fromEsm.text,
      }));`]));
    expect(out.esmNames).toEqual(out.cjsNames);
    expect(out.esmNames.length).toBeGreaterThan(20);
    expect({ ...out, esmNames: undefined, cjsNames: undefined }).toEqual({
      differ: [], sameSseParser: true, cjsErrorIsEsmClass: true, esmErrorIsCjsClass: true, sameErrorClass: true,
      code: 'ERR_INVALID_UTF8', offset: 1, text: 'a',
    });
  });

  it('gives browsers and bundlers the standalone ESM build, and Node a wrapper of the CommonJS one', () => {
    const resolved = (conditions: string[]) =>
      run([...conditions.map((c) => `--conditions=${c}`), '--input-type=module', '-e', `console.log(import.meta.resolve('seam-stream'))`]).trim();
    expect(relative(root, fileURLToPath(resolved([])))).toBe(join('dist', 'index.node.js'));
    expect(relative(root, fileURLToPath(resolved(['browser'])))).toBe(join('dist', 'index.js'));
    expect(relative(root, require.resolve('seam-stream'))).toBe(join('dist', 'index.cjs'));
    // the wrapper is only a list of the CommonJS build's names
    expect(readFileSync(join(root, 'dist/index.node.js'), 'utf8')).toMatch(/^(\/\/[^\n]*\n)*export \{[\w\s,]+\} from '\.\/index\.cjs';\n$/);
    // and the standalone ESM build, which browsers get, works as it is
    const out = JSON.parse(run(['--conditions=browser', '--input-type=module', '-e', `import * as m from 'seam-stream';${script}`]));
    expect({ ...out, exports: undefined }).toEqual({ ...expected, exports: undefined });
    const names = JSON.parse(run(['-e', `console.log(JSON.stringify(Object.keys(require('seam-stream')).sort().join(',')))`]));
    expect(out.exports).toBe(names);
  });

  it('declares its types for both entries', () => {
    const dts = readFileSync(join(root, 'dist/index.d.ts'), 'utf8');
    expect(dts).toContain('declare class Utf8Decoder');
    expect(dts).toContain('declare class SseParser');
    expect(dts).toContain('interface FinalReport');
  });

  it('the CLI decodes standard input and runs the demo', () => {
    expect(run(['dist/cli.js', 'decode', '--sse'], 'event: delta\ndata: a\ndata: b\n\n')).toBe(
      '{"type":"delta","data":"a\\nb","id":""}\n',
    );
    const demo = run(['dist/cli.js', 'demo']);
    expect(demo).toMatch(/seam \(SseParser \+ TextAssembler\): +0 of \d+ cuttings differ/);
  });

  it('the CLI prints its help for --help, also after a command, without reading standard input', async () => {
    // the help itself (every option with its default) is tested in test/cli/help.test.ts
    expect(run(['dist/cli.js', '--help'])).toMatch(/^usage: seam-stream COMMAND \[options\]/);
    // standard input stays open: a command that read it would never exit
    const child = spawn(process.execPath, ['dist/cli.js', 'decode', '--sse', '--help'], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
    const timer = setTimeout(() => child.kill(), 10_000);
    const code = await new Promise<number | null>((r) => child.on('close', r));
    clearTimeout(timer);
    child.stdin.destroy();
    expect({ code, usage: out.split('\n')[0] }).toEqual({ code: 0, usage: 'usage: seam-stream decode [options] [FILE|-]' });
  });

  it('the CLI loads the library by its package name instead of holding a copy of it', () => {
    const cli = readFileSync(join(root, 'dist/cli.js'), 'utf8');
    expect(cli.startsWith('#!/usr/bin/env node\n')).toBe(true);
    // what the bundle imports: Node's modules (tsup drops their node: prefix) and the package
    const specs = new Set([...cli.matchAll(/\b(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1]));
    expect([...specs].sort()).toEqual(['fs', 'path', 'seam-stream', 'url', 'zlib']); // (zlib: a captured body's Content-Encoding undone)
    expect(cli).not.toContain('WASM_BASE64');
    expect(cli).not.toMatch(/class SseParser\b/);
  });
});

describe('the library sources', () => {
  // The ESM build runs in a browser as is: the library may import only its own modules and the
  // bundled @noble/hashes; the command (cli/) and the benchmarks (bench/) sit on top of it.
  const dir = join(root, 'bindings');
  const files = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(d, e.name)) : e.name.endsWith('.ts') ? [join(d, e.name)] : []));

  it('import nothing outside bindings/ but @noble/hashes', () => {
    const outside: string[] = [];
    for (const f of files(dir)) {
      for (const [, spec] of readFileSync(f, 'utf8').matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)['"]([^'"]+)['"]/g)) {
        const inside = spec.startsWith('.') ? !relative(dir, resolve(f, '..', spec)).startsWith('..') : spec.startsWith('@noble/hashes/');
        if (!inside) outside.push(`${relative(root, f)}: ${spec}`);
      }
    }
    expect(outside).toEqual([]);
  });
});
