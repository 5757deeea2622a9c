// The gateway's upstream parser (examples/gateway/upstream.mjs) against Node's own (llhttp, through
// http.request), on generated responses, well-formed and malformed: each response is fed to
// http.request whole and to requestUpstream cut in two at every byte (at sampled bytes past 2 KiB),
// both over in-memory streams. The rules:
// - whatever llhttp rejects, the gateway's parser rejects, at every cut;
// - where both accept, the same status and the same body;
// - where llhttp accepts and the gateway's parser rejects, the reason is one of the documented
//   ways it is stricter (STRICTER below), and the test prints how often each came up;
// - the gateway's verdict does not depend on where the response is cut.
// Seeded (SEAM_SEED replays a run); the seed and the case are printed on failure.
import http from 'node:http';
import { Duplex } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { MAX_HEAD_BYTES, requestUpstream } from '../../examples/gateway/upstream.mjs';
import { SEED, rng } from '../helpers/random.js';

type Verdict = { ok: true; status: number; body: string } | { ok: false; why: string };

/** An in-memory connection: what the client writes is dropped; `feed` pushes the answer's pieces, then its end. */
function memorySocket() {
  const s = new Duplex({ allowHalfOpen: false, read() {}, write(_c, _e, cb) { cb(); } });
  const feed = async (pieces: Buffer[]) => {
    for (const p of pieces) {
      if (s.destroyed) return;
      s.push(Buffer.from(p)); // a copy: the gateway's client decodes its reads in place, as a socket's are its own
      await new Promise((r) => setImmediate(r));
    }
    if (!s.destroyed) s.push(null);
  };
  return { s, feed };
}

/** Node's reading: http.request over the in-memory connection, with the gateway's head limit. */
function llhttp(answer: Buffer): Promise<Verdict> {
  return new Promise((resolve) => {
    const { s, feed } = memorySocket();
    let settled = false;
    const settle = (v: Verdict) => { if (!settled) { settled = true; resolve(v); } };
    const req = http.request({ method: 'POST', host: 'x', path: '/', maxHeaderSize: MAX_HEAD_BYTES, createConnection: () => s as never }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => settle({ ok: true, status: res.statusCode!, body: Buffer.concat(parts).toString('latin1') }));
      res.on('error', (e) => settle({ ok: false, why: e.message }));
      res.on('aborted', () => settle({ ok: false, why: 'aborted' }));
    });
    req.on('error', (e) => settle({ ok: false, why: `${(e as NodeJS.ErrnoException).code} ${e.message}` }));
    req.on('close', () => setImmediate(() => settle({ ok: false, why: 'closed without an answer' })));
    req.end('{}');
    void feed([answer]).then(() => setTimeout(() => settle({ ok: false, why: 'no answer after the end' }), 20));
  });
}

/** The gateway's reading of the answer cut into `pieces`. */
async function ours(pieces: Buffer[]): Promise<Verdict> {
  const { s, feed } = memorySocket();
  const req = requestUpstream({ hostname: 'x', port: 80, path: '/', headers: {}, body: Buffer.from('{}'), createConnection: () => s });
  const fed = feed(pieces);
  let v: Verdict;
  try {
    const res = await req.response;
    v = await new Promise<Verdict>((resolve) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(Buffer.from(d)));
      res.on('end', () => resolve({ ok: true, status: res.statusCode, body: Buffer.concat(parts).toString('latin1') }));
      res.on('error', (e: Error) => resolve({ ok: false, why: e.message }));
    });
  } catch (e) {
    v = { ok: false, why: (e as Error).message };
  }
  await fed;
  return v;
}

/**
 * Where an answer with a Content-Length ends (after its interim answers, its head and that many
 * bytes), or -1 for one without.
 */
function lengthEnd(bytes: Buffer): number {
  const s = bytes.toString('latin1');
  for (let at = 0; ;) {
    const head = s.indexOf('\r\n\r\n', at);
    if (head < 0) return -1;
    if (/^HTTP\/1\.[01] 1\d\d/.test(s.slice(at, at + 12))) { at = head + 4; continue; }
    const cl = /\r\ncontent-length:[ \t]*(\d+)[ \t]*\r\n/i.exec(s.slice(at, head + 2));
    return cl === null ? -1 : head + 4 + Number(cl[1]);
  }
}

/** Where the gateway is stricter than llhttp, on purpose (docs/gateway.md: the threat model). */
const STRICTER: [string, RegExp][] = [
  ['a 101 without both Upgrade and Connection: upgrade (llhttp reads it as an ordinary answer)', /a 101 Switching Protocols/],
  ['a status line other than HTTP/1.0 or 1.1 with a status 100–599 and a reason of field-value bytes', /does not start with an HTTP\/1\.1 status line/],
  ['a Transfer-Encoding other than exactly chunked (llhttp reads other codings until the close)', /Transfer-Encoding ".*" \(only chunked is read\)/],
  ['a chunk size of more than 13 hex digits', /a chunk size over 13 hex digits/],
  ['a chunk extension without a name, or over 4 KiB (llhttp: 16 KiB)', /in a chunk extension|chunk extensions over 4096 bytes/],
  ['a Content-Length of more than 15 digits', /an invalid Content-Length "\d{16,}"/],
  ['more than 100 header or trailer fields', /more than 100 (header|trailer) fields/],
  ['trailers over 16 KiB', /trailers over 16384 bytes/],
];

// ---------------------------------------------------------------------------------------------
// The generator: a response from parts, then mutations

interface Case { name: string; bytes: Buffer }

function generate(seed: number, count: number): Case[] {
  const next = rng(seed);
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  const out: Case[] = [];
  const payloads = ['data: {"a":1}\n\n', 'é👩‍💻\r\n', '', 'x'.repeat(300), 'data: [DONE]\n\n'];
  for (let k = 0; k < count; k++) {
    const tags: string[] = [];
    let status = pick(['HTTP/1.1 200 OK', 'HTTP/1.1 200', 'HTTP/1.0 200 OK', 'HTTP/1.1 404 Not Found', 'HTTP/1.1 500 Oops', 'HTTP/1.1 200 \xe9t\xe9']);
    const headers: string[] = [pick(['Content-Type: text/event-stream', 'content-type:application/json', 'X-A:  spaced  ', 'X-Tab:\tv\t'])];
    const body = Buffer.from(pick(payloads) + pick(payloads), 'utf8').toString('latin1');
    let framing: 'chunked' | 'length' | 'close' | 'none' = pick(['chunked', 'chunked', 'length', 'close'] as const);
    let interim = '';
    let trailers = '';
    const sizeLine = (n: number) => n.toString(16);
    let exts = (_: number) => '';
    const mutations = int(3);
    const late: ((s: string) => string)[] = [];
    for (let m = 0; m < mutations; m++) {
      const kind = int(17);
      switch (kind) {
        case 0: tags.push('te+cl'); framing = 'chunked'; headers.push(`Content-Length: ${body.length}`); break;
        case 1: tags.push('dup-cl'); framing = 'length'; headers.push(`Content-Length: ${pick([body.length, body.length + 1])}`); break;
        case 2: { const v = pick(['+5', '-1', '5x', '5 5', '0x5', '', '99999999999999999999', '1234567890123456', '5,5']); tags.push(`bad-cl ${JSON.stringify(v)}`); framing = 'close'; headers.push(`Content-Length: ${v}`); break; }
        case 3: { const h = pick(['X-A : a', 'X(A): a', ': a', 'X\xe9: a', 'X A: a', 'X-A', 'X@: a']); tags.push(`bad-name ${JSON.stringify(h)}`); headers.push(h); break; }
        case 4: tags.push('fold'); headers.push(pick([' folded', '\tfolded'])); break;
        case 5: { const c = pick(['\x00', '\x01', '\x7f', '\x0b', '\x1f', '\r']); tags.push(`ctl ${JSON.stringify(c)}`); headers.push(`X-C: a${c}b`); break; }
        case 6: { const n = pick([40_000, 70_000]); tags.push(`long-header ${n}`); headers.push(`X-Long: ${'v'.repeat(n)}`); break; }
        case 7: { const n = pick([99, 101, 150]); tags.push(`headers ${n}`); for (let i = 0; i < n; i++) headers.push(`X-${i}: ${i}`); break; }
        case 8: { const st = pick(['HTTP/1.2 200 OK', 'HTTP/2.0 200 OK', 'HTTP/0.9 200 OK', 'http/1.1 200 OK', 'HTTP/1.1 20 OK', 'HTTP/1.1 2000 OK', 'HTTP/1.1  200 OK', 'HTTP/1.1 099 OK', 'HTTP/1.1 999 OK', 'HTTP/1.1 200 O\x01K', 'HTTP/1.1 200\tOK', 'HTTP/1.1200 OK']); tags.push(`status ${JSON.stringify(st)}`); status = st; break; }
        case 9: { const i = pick(['HTTP/1.1 100 Continue\r\n\r\n', 'HTTP/1.1 100 Continue\r\nX: y\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n', 'HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n', 'HTTP/1.1 102 Processing\r\n\r\n']); tags.push(`interim ${JSON.stringify(i.slice(9, 12))}`); interim += i; break; }
        case 10: tags.push('101'); status = 'HTTP/1.1 101 Switching Protocols'; headers.push('Upgrade: x', 'Connection: upgrade'); break;
        case 11: { const te = pick(['gzip', 'chunked, gzip', 'gzip, chunked', 'Chunked', 'chunked, chunked', ' chunked ']); tags.push(`te ${JSON.stringify(te)}`); framing = 'none'; headers.push(`Transfer-Encoding: ${te}`); break; }
        case 12: {
          if (framing !== 'chunked') break;
          const e = pick([';a=b', ';a="x y";b', ';a="q\\"q"', ';=b', '; a', ';a =b', ';a=\xe9', `;a=${'e'.repeat(5000)}`, `;a=${'e'.repeat(20_000)}`, ';a="\x01"', ';a;b;c=d']);
          tags.push(`ext ${JSON.stringify(e.slice(0, 12))}${e.length > 12 ? `…(${e.length})` : ''}`);
          exts = () => e;
          break;
        }
        case 13: {
          if (framing !== 'chunked') break;
          const t = pick(['X-T: 1\r\n', 'X-T: 1\r\nY: 2\r\n', 'X T: 1\r\n', 'X-T: 1\n', ' fold\r\n', 'X-T: a\x01\r\n', `X-Big: ${'t'.repeat(20_000)}\r\n`, ': v\r\n']);
          tags.push(`trailer ${JSON.stringify(t.slice(0, 12))}${t.length > 12 ? `…(${t.length})` : ''}`);
          trailers = t;
          break;
        }
        case 14: {
          if (framing !== 'chunked') break;
          const bad = pick(['5 ff', '5 ', ' 5', '5\t', 'g', '-5', '0x5', '00000000000005', '+5', '5;', '5 ;a']);
          tags.push(`size ${JSON.stringify(bad)}`);
          late.push((s) => s.replace(/\r\n\r\n[0-9a-f]+/, `\r\n\r\n${bad}`));
          break;
        }
        case 15: {
          const which = int(2);
          tags.push(which ? 'bare-lf' : 'bare-cr');
          late.push((s) => {
            const at: number[] = [];
            for (let i = s.indexOf('\r\n'); i >= 0; i = s.indexOf('\r\n', i + 1)) at.push(i);
            const i = pick(at);
            return i === undefined ? s : s.slice(0, i) + (which ? '\n' : '\r') + s.slice(i + 2);
          });
          break;
        }
        default: {
          // a random byte replaced, inserted or removed in the first 120 bytes
          const op = int(3);
          const c = pick(['\r', '\n', ' ', '\t', ':', ';', '"', '\\', '0', 'f', 'g', '\x00', '\x7f', '\xe9', '=', 'A']);
          const at = int(120);
          tags.push(`${['replace', 'insert', 'remove'][op]} ${JSON.stringify(c)}@${at}`);
          late.push((s) => (at >= s.length ? s : op === 0 ? s.slice(0, at) + c + s.slice(at + 1) : op === 1 ? s.slice(0, at) + c + s.slice(at) : s.slice(0, at) + s.slice(at + 1)));
        }
      }
    }
    let bodyText: string;
    if (framing === 'chunked' || framing === 'none') {
      if (framing === 'chunked') headers.push('Transfer-Encoding: chunked');
      const pieces: string[] = [];
      for (let i = 0; i < body.length;) {
        const n = Math.min(body.length - i, 1 + int(120));
        pieces.push(body.slice(i, i + n));
        i += n;
      }
      const wrong = int(12) === 0; // a chunk longer or shorter than its size
      if (wrong) tags.push('chunk-size-wrong');
      bodyText = pieces.map((p, i) => `${sizeLine(p.length + (wrong && i === 0 ? pick([-1, 1]) : 0))}${exts(i)}\r\n${p}\r\n`).join('') + `0\r\n${trailers}\r\n`;
    } else if (framing === 'length') {
      headers.push(`Content-Length: ${body.length}`); // (after the one dup-cl pushed, if any)
      bodyText = body;
    } else bodyText = body;
    let text = `${interim}${status}\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n${bodyText}`;
    for (const f of late) text = f(text);
    out.push({ name: `#${k} ${framing} [${tags.join(', ')}]`, bytes: Buffer.from(text, 'latin1') });
  }
  return out;
}

/** The cut points of a response: every byte, or 64 sampled ones past 2 KiB. */
function cutsOf(n: number, next: () => number): number[] {
  if (n <= 2048) return Array.from({ length: n + 1 }, (_, i) => i);
  return [0, n, ...Array.from({ length: 62 }, () => Math.floor(next() * n))];
}

describe('the upstream parser against llhttp', () => {
  test('generated responses, cut at every byte: llhttp\'s rejections are rejected, agreements agree, the rest is stricter on purpose (seed printed)', async () => {
    const cases = generate(SEED, 700);
    const next = rng(SEED + 7);
    const failures: string[] = [];
    const tally = { bothAccept: 0, bothReject: 0, stricter: new Map<string, number>() };
    const afterEnd = new Set<string>();
    for (const c of cases) {
      const node = await llhttp(c.bytes);
      let first: Verdict | undefined;
      let alone: Verdict | null | undefined; // (llhttp's reading of the answer without the bytes after its end)
      for (const at of cutsOf(c.bytes.length, next)) {
        const pieces = [c.bytes.subarray(0, at), c.bytes.subarray(at)].filter((p) => p.length > 0);
        const v = await ours(pieces);
        const where = `seed ${SEED}, ${c.name}, cut at ${at}: ${JSON.stringify(c.bytes.toString('latin1').slice(0, 200))}`;
        const verdict = (x: Verdict) => (x.ok ? JSON.stringify(x) : 'rejected'); // (which fault is named first may depend on the cut)
        if (first === undefined) first = v;
        else if (verdict(v) !== verdict(first)) failures.push(`${where}: ${JSON.stringify(v)} but ${JSON.stringify(first)} at another cut`);
        if (!node.ok && v.ok) {
          // bytes after the end of the answer: llhttp, given them in the read that ends it, reads on
          // and rejects the connection, and accepts the same answer when they come in a later read;
          // the gateway reads one answer a connection and closes it at the answer's end, whatever the
          // read. Both must read the answer itself alike.
          if (alone === undefined) {
            const end = lengthEnd(c.bytes);
            alone = end > 0 && end < c.bytes.length && /^HPE_INVALID_CONSTANT /.test(node.why) ? await llhttp(c.bytes.subarray(0, end)) : null;
          }
          if (alone !== null && alone.ok && alone.status === v.status && alone.body === v.body) afterEnd.add(c.name);
          else failures.push(`${where}: llhttp rejects (${node.why}), the gateway accepts ${JSON.stringify(v).slice(0, 120)}`);
        }
        if (node.ok && v.ok && (v.status !== node.status || v.body !== node.body)) failures.push(`${where}: llhttp ${node.status} ${JSON.stringify(node.body).slice(0, 80)}, the gateway ${v.status} ${JSON.stringify(v.body).slice(0, 80)}`);
        if (node.ok && !v.ok && !STRICTER.some(([, re]) => re.test(v.why))) failures.push(`${where}: llhttp accepts, the gateway rejects for an undocumented reason: ${v.why}`);
        if (failures.length > 20 || (failures.length > 0 && failures.at(-1)!.includes(c.name))) break; // one cut per case is enough to show
      }
      if (failures.length > 20) break;
      if (afterEnd.has(c.name)) continue;
      if (first!.ok && node.ok) tally.bothAccept++;
      else if (!first!.ok && !node.ok) tally.bothReject++;
      else if (!first!.ok) {
        const why = STRICTER.find(([, re]) => !first!.ok && re.test(first!.why))?.[0] ?? '?';
        tally.stricter.set(why, (tally.stricter.get(why) ?? 0) + 1);
      }
    }
    expect(failures).toEqual([]);
    console.log(`parser differential (seed ${SEED}, ${cases.length} responses): both accept ${tally.bothAccept}, both reject ${tally.bothReject}, bytes after the end of the answer (read alike, llhttp rejecting the connection) ${afterEnd.size}, the gateway stricter ${[...tally.stricter.values()].reduce((a, b) => a + b, 0)}:\n${[...tally.stricter].map(([k, n]) => `  ${n}  ${k}`).join('\n')}`);
    // the generator reaches each side: enough of both verdicts to mean something
    expect(tally.bothAccept).toBeGreaterThan(100);
    expect(tally.bothReject).toBeGreaterThan(200);
  }, 240_000);
});
