// The body after an HTTP response head, read in memory (cli/http.ts's withoutHttpHead): its chunked
// coding and compression undone where the head says so and the body's first bytes are so, the same
// whichever way the input is cut (whole, every two-piece split, a byte a read, seeded random reads).
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { type HttpHead, withoutHttpHead } from '../../cli/http.js';
import { BEDROCK_FIXTURES } from '../helpers/bedrock-fixtures.js';
import { prng } from './helpers.js';

interface Read {
  body: string;
  head?: HttpHead;
  error?: string;
}

async function read(bytes: Uint8Array, cuts: number[]): Promise<Read> {
  async function* src(): AsyncGenerator<Uint8Array> {
    let at = 0;
    for (const c of [...cuts, bytes.length]) {
      if (c <= at) continue;
      yield bytes.slice(at, c);
      at = c;
    }
  }
  let head: HttpHead | undefined;
  const out: Buffer[] = [];
  let error: string | undefined;
  try {
    for await (const c of withoutHttpHead(src(), (h) => void (head = h))) out.push(Buffer.from(c));
  } catch (e) {
    error = (e as Error).message;
  }
  return { body: Buffer.concat(out).toString('latin1'), ...(head !== undefined ? { head: { ...head } } : {}), ...(error !== undefined ? { error } : {}) };
}


/** What `bytes` reads as whole, checked the same at every two-piece split, a byte a read and seeded random reads. */
async function readEveryWay(bytes: Uint8Array, label: string): Promise<Read> {
  const whole = await read(bytes, []);
  for (let i = 1; i < bytes.length; i++) expect(await read(bytes, [i]), `${label}: split at ${i}`).toEqual(whole);
  expect(await read(bytes, Array.from({ length: bytes.length }, (_, i) => i)), `${label}: a byte a read`).toEqual(whole);
  for (let seed = 1; seed <= 20; seed++) {
    const r = prng(seed);
    const cuts: number[] = [];
    for (let at = 0; at < bytes.length; at += 1 + Math.floor(r() * 40)) cuts.push(at);
    expect(await read(bytes, cuts), `${label}: random reads, seed ${seed}`).toEqual(whole);
  }
  return whole;
}

const bytesOf = (s: string) => Buffer.from(s, 'latin1');
const HEAD = (more: string, status = '200 OK') => `HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\n${more}\r\n`;

describe('a body that curl decoded already, whose first line is hex digits (curl -i keeps the head\'s Transfer-Encoding: chunked)', () => {
  it('is read as it is: a text answer beginning with a word of hex letters, a number, 0, or a server\'s plain-text error', async () => {
    for (const [status, body] of [
      ['200 OK', 'abc\nhello world\n'],
      ['200 OK', 'Be careful\nwith that\n'],
      ['200 OK', 'Face it: the answer is 42.\n'],
      ['200 OK', '0\nzero is where it starts\n'],
      ['200 OK', '12 apples\r\nand 3 pears\r\n'],
      ['502 Bad Gateway', 'Bad Gateway\n'],
    ]) {
      const h = HEAD('Transfer-Encoding: chunked\r\n', status);
      const r = await readEveryWay(bytesOf(h + body), body);
      expect(r, body).toEqual({ body, head: { statusLine: `HTTP/1.1 ${status}`, status: Number(status.slice(0, 3)), bytes: h.length, chunked: true, encoding: '', undone: { chunked: false, encoding: '' } } });
    }
  });

  it('a body in chunked coding is still undone: small chunks, bare LF line ends, an empty body, a cut first chunk, a first chunk past 64 KiB', async () => {
    const h = HEAD('Transfer-Encoding: chunked\r\n');
    const undone = { statusLine: 'HTTP/1.1 200 OK', status: 200, bytes: h.length, chunked: true, encoding: '', undone: { chunked: true, encoding: '' } };
    const cases: [string, string][] = [
      ['abc\r\n' + 'x'.repeat(0xabc) + '\r\n3\r\nend\r\n0\r\n\r\n', 'x'.repeat(0xabc) + 'end'],
      ['5;ext="1"\r\nhello\r\n0\r\nx-trailer: 1\r\n\r\n', 'hello'],
      ['5\nhello\n6\n world\n0\n\n', 'hello world'],
      ['0\r\n\r\n', ''],
      ['10\r\nhello', 'hello'],
    ];
    for (const [raw, body] of cases) expect(await readEveryWay(bytesOf(h + raw), raw), raw).toEqual({ body, head: undone });
    const big = 'y'.repeat(100_000);
    const r = await read(bytesOf(`${h}${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`), [h.length + 1000, h.length + 70_000]);
    expect(r).toEqual({ body: big, head: undone });
  });
});

describe('a broken chunked coding, and what follows the body', () => {
  const h = HEAD('Transfer-Encoding: chunked\r\n');
  const undone = (encoding = '') => ({ statusLine: 'HTTP/1.1 200 OK', status: 200, bytes: h.length + (encoding ? `Content-Encoding: ${encoding}\r\n`.length : 0), chunked: true, encoding, undone: { chunked: true, encoding } });
  const said = (what: string, at: number) => `the body's chunked transfer coding (the head's Transfer-Encoding) is broken: ${what} at byte ${at} of the body as it came (its chunk sizes counted)`;

  it('the data before a broken size line is given, then the error at its offset, whichever way the reads fell', async () => {
    const raw = '5\r\nhello\r\n6\r\n world\r\nzz\r\nmore\r\n0\r\n\r\n';
    expect(await readEveryWay(bytesOf(h + raw), raw)).toEqual({ body: 'hello world', head: undone(), error: said('no chunk size', raw.indexOf('zz')) });
    const long = '5\r\nhello\r\n6\r\n world!\r\n0\r\n\r\n';
    expect(await readEveryWay(bytesOf(h + long), long)).toEqual({ body: 'hello world', head: undone(), error: said("a chunk's data is longer than its size,", long.indexOf('!')) });
  });

  it('a size of 13 hex digits or more is an error, its leading zeros aside (no size past 2^48 is held)', async () => {
    const zeros = '0000000000000005\r\nhello\r\n0\r\n\r\n';
    expect(await readEveryWay(bytesOf(h + zeros), zeros)).toEqual({ body: 'hello', head: undone() });
    const huge = '1\r\nx\r\n1\r\ny\r\n10000000000000\r\nhello\r\n';
    expect(await readEveryWay(bytesOf(h + huge), huge)).toEqual({ body: 'xy', head: undone(), error: said('a chunk size of more than 12 hex digits', huge.indexOf('10000000000000') + 12) });
  });

  it('a gzip body in chunks broken after some: what its first chunks decompress to, then the chunked coding\'s error', async () => {
    const text = Array.from({ length: 200 }, (_, i) => `data: {"n":${i}}\n\n`).join('');
    const packed = zlib.gzipSync(text);
    const hz = HEAD('Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n');
    const pieces: string[] = [];
    for (let i = 0; i < packed.length; i += 64) {
      const p = packed.subarray(i, i + 64);
      pieces.push(`${p.length.toString(16)}\r\n${p.toString('latin1')}\r\n`);
    }
    const broke = pieces.slice(0, 3).join('').length;
    const raw = `${pieces.slice(0, 3).join('')}zz\r\n${pieces.slice(3).join('')}0\r\n\r\n`;
    const r = await readEveryWay(bytesOf(hz + raw), 'gzip broken');
    expect(r.error).toBe(said('no chunk size', broke));
    // (all the first chunks' data holds, as a flush gives it)
    const held = zlib.gunzipSync(packed.subarray(0, 192), { finishFlush: zlib.constants.Z_SYNC_FLUSH }).toString('latin1');
    expect(held.length).toBeGreaterThan(400);
    expect(r.body).toBe(held);
    expect(r.head).toEqual({ ...undone('gzip'), bytes: hz.length });
  });

  it('the bytes after the last chunk (a kept-alive connection\'s next response) are not read as the body', async () => {
    const raw = '5\r\nhello\r\n0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnext';
    expect(await readEveryWay(bytesOf(h + raw), raw)).toEqual({ body: 'hello', head: undone() });
  });
});

describe('a compressed body cut short', () => {
  it('gives all its bytes hold, and no error: the stream read from it says it was cut (gzip, deflate, Brotli)', async () => {
    const text = Array.from({ length: 100 }, (_, i) => `data: {"n":${i}}\n\n`).join('');
    for (const [name, compress, decompress] of [
      ['gzip', zlib.gzipSync, (b: Buffer) => zlib.gunzipSync(b, { finishFlush: zlib.constants.Z_SYNC_FLUSH })],
      ['deflate', zlib.deflateSync, (b: Buffer) => zlib.inflateSync(b, { finishFlush: zlib.constants.Z_SYNC_FLUSH })],
      ['br', zlib.brotliCompressSync, (b: Buffer) => zlib.brotliDecompressSync(b, { finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH })],
    ] as const) {
      const h = HEAD(`Content-Encoding: ${name}\r\n`);
      const packed = compress(text);
      const cut = packed.subarray(0, packed.length - 20);
      const held = decompress(cut).toString('latin1');
      expect(held.length, name).toBeGreaterThan(text.length / 2);
      expect(await readEveryWay(Buffer.concat([bytesOf(h), cut]), name)).toEqual({
        body: held, head: { statusLine: 'HTTP/1.1 200 OK', status: 200, bytes: h.length, chunked: false, encoding: name, undone: { chunked: false, encoding: name } },
      });
    }
  });
});

describe('several codings', () => {
  const text = Array.from({ length: 30 }, (_, i) => `data: {"n":${i}}\n\n`).join('');
  const chunkedOf = (b: Buffer) => Buffer.concat([bytesOf(`${b.length.toString(16)}\r\n`), b, bytesOf('\r\n0\r\n\r\n')]);
  const headOf = (h: string, encoding: string, undone: string, chunked: boolean) =>
    ({ statusLine: 'HTTP/1.1 200 OK', status: 200, bytes: h.length, chunked, encoding, undone: { chunked, encoding: undone } });

  it('Transfer-Encoding: gzip, chunked: the transfer\'s gzip is undone after its chunks', async () => {
    const h = HEAD('Transfer-Encoding: gzip, chunked\r\n');
    expect(await readEveryWay(Buffer.concat([bytesOf(h), chunkedOf(zlib.gzipSync(text))]), 'te gzip')).toEqual({ body: text, head: headOf(h, 'gzip', 'gzip', true) });
  });

  it('two compressions, named in one field or in two lines, undone last first; one that curl undid already left as it is', async () => {
    const packed = zlib.brotliCompressSync(zlib.gzipSync(text));
    for (const more of ['Content-Encoding: gzip, br\r\n', 'Content-Encoding: gzip\r\nContent-Encoding: br\r\n']) {
      const h = HEAD(more);
      expect(await readEveryWay(Buffer.concat([bytesOf(h), packed]), more), more).toEqual({ body: text, head: headOf(h, 'gzip, br', 'gzip, br', false) });
    }
    const h = HEAD('Content-Encoding: gzip, br\r\n');
    expect(await read(Buffer.concat([bytesOf(h), bytesOf(text)]), [])).toEqual({ body: text, head: headOf(h, 'gzip, br', '', false) });
  });
});

describe('a Brotli body, which has no magic number', () => {
  it('is told from a text that curl undid already by its first bytes decoding, its first byte printable or not (a 64 KiB window\'s often is)', async () => {
    const h = HEAD('Content-Encoding: br\r\n');
    const headOf = (encoding: string) => ({ statusLine: 'HTTP/1.1 200 OK', status: 200, bytes: h.length, chunked: false, encoding: 'br', undone: { chunked: false, encoding } });
    let printable = 0;
    for (let n = 1; n < 60; n += 3) {
      const text = Array.from({ length: 1 + (n % 5) }, (_, i) => `data: {"n":${i},"x":"${'ab'.repeat(n)}"}\n\n`).join('');
      for (const lgwin of [16, 22]) {
        const packed = zlib.brotliCompressSync(text, { params: { [zlib.constants.BROTLI_PARAM_LGWIN]: lgwin } });
        if (packed[0] >= 0x20 && packed[0] < 0x7f) printable++;
        expect(await read(Buffer.concat([bytesOf(h), packed]), [h.length + 3]), `${n} ${lgwin}`).toEqual({ body: text, head: headOf('br') });
      }
      expect(await read(bytesOf(h + text), [h.length + 3]), `${n} decoded`).toEqual({ body: text, head: headOf('') });
    }
    expect(printable).toBeGreaterThan(3);
    // (a binary stream curl undid already: Bedrock's frames, which begin with a zero byte)
    for (const f of BEDROCK_FIXTURES) expect(await read(Buffer.concat([bytesOf(h), f.bytes]), []), f.name).toEqual({ body: Buffer.from(f.bytes).toString('latin1'), head: headOf('') });
    const packed = zlib.brotliCompressSync('data: {"n":1}\n\n', { params: { [zlib.constants.BROTLI_PARAM_LGWIN]: 16 } });
    expect(await readEveryWay(Buffer.concat([bytesOf(h), packed]), 'br small')).toEqual({ body: 'data: {"n":1}\n\n', head: headOf('br') });
  });
});
