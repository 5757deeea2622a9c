// The gateway's own HTTP/1.1 client for its upstream (examples/gateway/upstream.mjs):
// - its chunked decoder, on chunk framings with extensions, trailers and sizes in either case, cut
//   in two at every byte, dripped and cut at random (seed printed): always the payload, and the
//   same payload as Node's own HTTP parser reads (a node:http server's chunked writes as oracle);
// - malformed framing: an UpstreamProtocolError at its exact byte offset;
// - responses from a raw TCP server, cut at every byte of their head and body: status, headers,
//   body (chunked, Content-Length, until close), interim 1xx heads skipped, a cut body an error,
//   and nothing left open;
// - an https upstream (a self-signed test certificate): rejected unless trusted, then the same.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { Duplex, PassThrough } from 'node:stream';
import { afterEach, describe, expect, test } from 'vitest';
import { ChunkedDecoder, UpstreamProtocolError, requestUpstream } from '../../examples/gateway/upstream.mjs';
import { SEED, cut, randomCuts, rng, standardChunkings } from '../helpers/random.js';
import { FakeUpstream, TEST_CERT } from './fake-upstream.js';

const b = (s: string) => Buffer.from(s, 'latin1');

/** Decodes the pieces (each copied first: the decoder works in place) into one payload. */
function decodeAll(pieces: Uint8Array[]): { payload: Buffer; done: boolean } {
  const d = new ChunkedDecoder();
  const out: Buffer[] = [];
  for (const p of pieces) out.push(Buffer.from(d.decode(Buffer.from(p))));
  return { payload: Buffer.concat(out), done: d.done };
}

const PAYLOAD = Buffer.from('data: {"choices":[{"delta":{"content":"é👩‍💻 ok"}}]}\n\n');
const FRAMINGS: [string, Buffer, Buffer][] = [
  ['plain sizes', b(`${PAYLOAD.length.toString(16)}\r\n`), b('\r\n')],
  ['upper case hex, leading zeros', b(`00${PAYLOAD.length.toString(16).toUpperCase()}\r\n`), b('\r\n')],
  ['an extension', b(`${PAYLOAD.length.toString(16)};name=value;q="x y"\r\n`), b('\r\n')],
  ['extensions with quoted values and no value', b(`${PAYLOAD.length.toString(16)};a="x \\"y\\"";b;c=d\r\n`), b('\r\n')],
];

describe('the chunked decoder', () => {
  test.each(FRAMINGS)('%s, with trailers: every two-piece split, a drip, random cuts (seed printed)', (_, head, tail) => {
    const body = Buffer.concat([head, PAYLOAD, tail, b('3\r\nabc\r\n'), head, PAYLOAD, tail, b('0\r\nx-trailer: 1\r\nother: 2\r\n\r\n')]);
    const want = Buffer.concat([PAYLOAD, b('abc'), PAYLOAD]);
    for (const pieces of standardChunkings(body)) {
      const got = decodeAll(pieces);
      expect(got.payload.equals(want)).toBe(true);
      expect(got.done).toBe(true);
    }
    const next = rng(SEED);
    for (let round = 0; round < 50; round++) {
      const got = decodeAll(cut(body, randomCuts(body, next, 1 + round)));
      expect(got.payload.equals(want), `seed ${SEED} round ${round}`).toBe(true);
    }
  });

  test('the payload moves within the read itself: the result is a view of it', () => {
    const read = Buffer.concat([b('5\r\nhello\r\n6\r\n world\r\n')]);
    const d = new ChunkedDecoder();
    const out = d.decode(read);
    expect(out.buffer).toBe(read.buffer);
    expect(out.byteOffset).toBe(read.byteOffset);
    expect(Buffer.from(out).toString()).toBe('hello world');
    expect(d.done).toBe(false);
    expect(Buffer.from(d.decode(b('0\r\n\r\nanything after the body'))).length).toBe(0);
    expect(d.done).toBe(true);
  });

  test('what Node\'s own HTTP parser reads of a node:http server\'s chunked writes, byte for byte', async () => {
    const pieces = ['', 'a', 'é'.repeat(3000), '\r\n', '0\r\n', 'x'.repeat(70_000), '👩‍💻'];
    const server = http.createServer((_, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const p of pieces) res.write(p);
      res.end('last');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      // the wire as a raw client reads it, and the body as http.request reads it
      const wire = await new Promise<Buffer>((resolve) => {
        const s = net.connect(port, '127.0.0.1', () => s.write('GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'));
        const parts: Buffer[] = [];
        s.on('data', (d) => parts.push(d));
        s.on('close', () => resolve(Buffer.concat(parts)));
      });
      const oracle = await new Promise<Buffer>((resolve) => {
        http.get({ port, host: '127.0.0.1', agent: false }, (res) => {
          const parts: Buffer[] = [];
          res.on('data', (d) => parts.push(d));
          res.on('end', () => resolve(Buffer.concat(parts)));
        });
      });
      expect(oracle.toString()).toBe(pieces.join('') + 'last');
      const body = wire.subarray(wire.indexOf('\r\n\r\n') + 4);
      const next = rng(SEED + 1);
      for (let round = 0; round < 20; round++) {
        const got = decodeAll(cut(body, randomCuts(body, next, [1, 7, 100, 5000][round % 4])));
        expect(got.payload.equals(oracle), `seed ${SEED + 1} round ${round}`).toBe(true);
        expect(got.done).toBe(true);
      }
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  const BAD: [string, string, number, RegExp, string][] = [
    ['no size', '\r\nabc', 0, /a chunk size line without a size/, ''],
    ['a letter in the size', '5g\r\nhello', 1, /byte 0x67 in a chunk size/, ''],
    ['a bare LF after the size', '5\nhello', 1, /byte 0xa in a chunk size/, ''],
    ['a bare LF in an extension', '5;x\nhello', 3, /a bare LF in a chunk size line/, ''],
    ['CR without LF', '5\rhello', 2, /no LF after the CR of a chunk size line/, ''],
    ['a chunk longer than its size', '5\r\nhello!\r\n', 8, /a chunk longer than its size/, 'hello'],
    ['CR without LF after the data', '5\r\nhello\rX', 9, /no LF after the CR that ends a chunk/, 'hello'],
    ['a size of 14 hex digits', '10000000000000\r\n', 13, /a chunk size over 13 hex digits/, ''],
    ['a bare LF in the trailers', '0\r\nx: 1\n', 7, /a bare LF in the trailers/, ''],
    // as llhttp: no white space in a size line, a size of hex digits alone, extensions bounded
    ['white space before an extension', '5 ;ext\r\nhello', 1, /byte 0x20 in a chunk size/, ''],
    ['"5 ff": a size, a space, more hex', '5 ff\r\nhello', 1, /byte 0x20 in a chunk size/, ''],
    ['an extension without a name', '5;=x\r\nhello', 2, /byte 0x3d in a chunk extension/, ''],
    ['white space after the ;', '5; a\r\nhello', 2, /byte 0x20 in a chunk extension/, ''],
    ['extensions over 4096 bytes', `5;a=${'x'.repeat(5000)}\r\nhello`, 4098, /chunk extensions over 4096 bytes/, ''],
    ['a bad trailer name', '0\r\nx y: 1\r\n\r\n', 4, /byte 0x20 in a trailer line/, ''],
    ['a folded trailer line', '0\r\nx: 1\r\n y\r\n\r\n', 9, /a folded trailer line/, ''],
    ['a control byte in a trailer value', '0\r\nx: \u0001\r\n\r\n', 6, /byte 0x1 in a trailer line/, ''],
    ['trailers over 16 KiB', `0\r\nx: ${'t'.repeat(17_000)}\r\n\r\n`, 3 + 16_384, /trailers over 16384 bytes/, ''],
    ['more than 100 trailer fields', `0\r\n${'t: 1\r\n'.repeat(101)}\r\n`, 3 + 600, /more than 100 trailer fields/, ''],
  ];
  test.each(BAD)('%s: UpstreamProtocolError at its byte offset, with the payload before it, at every split; then it stays failed', (_, text, at, why, more) => {
    const body = Buffer.concat([b('3\r\nabc\r\n'), b(text)]);
    for (const pieces of standardChunkings(body)) {
      const d = new ChunkedDecoder();
      let err: unknown;
      const out: Buffer[] = [];
      try {
        for (const p of pieces) out.push(Buffer.from(d.decode(Buffer.from(p))));
      } catch (e) { err = e; }
      expect(err).toBeInstanceOf(UpstreamProtocolError);
      expect((err as Error).message).toMatch(why);
      expect((err as Error).message).toContain(`at byte ${8 + at}:`);
      out.push(Buffer.from((err as { payload: Uint8Array }).payload));
      expect(Buffer.concat(out).toString()).toBe(`abc${more}`); // every payload byte before the fault, once
      expect(() => d.decode(b('0\r\n\r\n'))).toThrow(UpstreamProtocolError);
      expect(d.done).toBe(false);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// requests against a raw TCP server

let servers: net.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  servers = [];
});

/** A TCP server that answers each connection with `answer` cut at `at`, then closes (or not, with `close: false`). */
async function rawServer(answer: Buffer, at: number[], opts: { close?: boolean } = {}) {
  const seen: Buffer[] = [];
  const open = new Set<net.Socket>();
  const server = net.createServer((s) => {
    open.add(s);
    s.on('close', () => open.delete(s));
    s.on('error', () => {});
    const got: Buffer[] = [];
    s.on('data', async (d) => {
      got.push(d);
      const all = Buffer.concat(got);
      const h = all.indexOf('\r\n\r\n');
      if (h < 0) return;
      const len = Number(/content-length: (\d+)/i.exec(all.subarray(0, h).toString())?.[1] ?? 0);
      if (all.length < h + 4 + len) return;
      s.removeAllListeners('data');
      seen.push(all);
      s.on('data', () => {});
      for (const piece of cut(answer, at)) {
        s.write(piece);
        await new Promise((r) => setImmediate(r));
      }
      if (opts.close !== false) s.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return { port: (server.address() as net.AddressInfo).port, seen, open };
}

/** One request; resolves its status, headers, body and how it ended. */
async function fetchRaw(port: number, extra: Record<string, string> = {}) {
  const req = requestUpstream({ hostname: '127.0.0.1', port, path: '/v1/x?y=1', headers: { 'content-type': 'application/json', ...extra }, body: Buffer.from('{"a":1}') });
  const res = await req.response;
  const parts: Buffer[] = [];
  const ended = await new Promise<string>((resolve) => {
    let how = '';
    res.addListener('data', (d: Buffer) => parts.push(Buffer.from(d))); // (as on(): the body starts with its first 'data' listener)
    res.on('end', () => { how ||= 'end'; });
    res.on('error', (e: Error) => { how ||= `error: ${e.message}`; });
    res.on('close', () => resolve(how || 'close'));
  });
  return { status: res.statusCode, headers: res.headers, body: Buffer.concat(parts).toString(), ended, socket: req.socket as net.Socket };
}

describe('a request and its answer', () => {
  const chunked = b('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nX-Two: a\r\nx-two: b\r\n\r\n'
    + '6\r\ndata: \r\n4\r\nhi\n\n\r\n0\r\n\r\n');

  test('what the upstream receives: the request line, host, headers, content-length, connection: close, the body', async () => {
    const up = await rawServer(chunked, []);
    await fetchRaw(up.port, { authorization: 'Bearer k' });
    expect(up.seen[0].toString()).toBe('POST /v1/x?y=1 HTTP/1.1\r\nhost: 127.0.0.1:' + up.port
      + '\r\ncontent-type: application/json\r\nauthorization: Bearer k\r\ncontent-length: 7\r\nconnection: close\r\n\r\n{"a":1}');
    expect(() => requestUpstream({ hostname: '127.0.0.1', port: up.port, path: '/', headers: { 'x-a': 'one\r\nx-b: two' }, body: Buffer.alloc(0) }))
      .toThrow(/header "x-a" has a character HTTP does not allow/);
  });

  test('a chunked answer cut at every byte: its status, headers and payload, and its connection closed', async () => {
    for (let i = 0; i <= chunked.length; i++) {
      const up = await rawServer(chunked, [i], { close: false }); // the gateway closes it, the body being whole
      const r = await fetchRaw(up.port);
      expect([r.status, r.headers['content-type'], r.headers['x-two'], r.body, r.ended]).toEqual([200, 'text/event-stream', 'a, b', 'data: hi\n\n', 'end']);
      expect(r.socket.destroyed).toBe(true);
    }
  });

  test('Content-Length, until the close, and interim 1xx heads, each cut at every byte', async () => {
    const cases: [string, string, string][] = [
      ['HTTP/1.1 404 Not Found\r\nContent-Length: 11\r\n\r\n{"e":"no"}\nignored', '{"e":"no"}\n', 'end'],
      ['HTTP/1.0 200 OK\r\n\r\nuntil the close', 'until the close', 'end'],
      ['HTTP/1.1 100 Continue\r\nX-Interim: 1\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok', 'ok', 'end'],
      // (the interim answers a client did not ask for, RFC 9110 15.2: a CDN's 103 Early Hints, a 102 Processing)
      ['HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok', 'ok', 'end'],
      ['HTTP/1.1 204 No Content\r\n\r\n', '', 'end'],
    ];
    for (const [answer, body, ended] of cases) {
      for (let i = 0; i <= answer.length; i++) {
        const up = await rawServer(b(answer), [i]);
        const r = await fetchRaw(up.port);
        expect([r.body, r.ended], `${JSON.stringify(answer)} cut at ${i}`).toEqual([body, ended]);
      }
    }
  });

  test('a body cut short, or malformed: an error after the payload before it', async () => {
    const cases: [string, string, RegExp][] = [
      ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3\r\nab', 'helloab', /closed the connection before the end of its body/],
      ['HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf', 'half', /closed the connection before the end of its body/],
      ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n', 'hello', /malformed at byte 10: a chunk size line without a size/],
    ];
    for (const [answer, body, why] of cases) {
      const up = await rawServer(b(answer), []);
      const r = await fetchRaw(up.port);
      expect(r.body).toBe(body);
      expect(r.ended).toMatch(why);
    }
  });

  test('no answer a client could read: the response promise rejects', async () => {
    const bad: [string, RegExp][] = [
      ['SPDY/3 200 OK\r\n\r\n', /does not start with an HTTP\/1.1 status line/],
      ['HTTP/1.1 200 OK\r\nBad Header\r\n\r\n', /a malformed header line/],
      ['HTTP/1.1 200 OK\r\nX-Long: ' + 'x'.repeat(70_000), /response head is over 65536 bytes/],
      ['HTTP/1.1 200 OK\r\n', /closed the connection before answering/],
    ];
    for (const [answer, why] of bad) {
      const up = await rawServer(b(answer), []);
      const req = requestUpstream({ hostname: '127.0.0.1', port: up.port, path: '/', headers: {}, body: Buffer.alloc(0) });
      await expect(req.response).rejects.toThrow(why);
      expect((req.socket as net.Socket).destroyed).toBe(true);
    }
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((r) => closed.close(r));
    await expect(requestUpstream({ hostname: '127.0.0.1', port, path: '/', headers: {}, body: Buffer.alloc(0) }).response).rejects.toThrow(/ECONNREFUSED/);
  });

  test('destroy() before the answer rejects with its reason; a destroyed body ends in close alone, and the upstream sees the close', async () => {
    const up = await rawServer(b(''), [], { close: false });
    const req = requestUpstream({ hostname: '127.0.0.1', port: up.port, path: '/', headers: {}, body: Buffer.alloc(0) });
    await new Promise((r) => setTimeout(r, 20));
    req.destroy(new Error('no answer within 5 ms'));
    await expect(req.response).rejects.toThrow('no answer within 5 ms');
    const up2 = await rawServer(b('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n'), [], { close: false });
    const req2 = requestUpstream({ hostname: '127.0.0.1', port: up2.port, path: '/', headers: {}, body: Buffer.alloc(0) });
    const res = await req2.response;
    const events: string[] = [];
    await new Promise<void>((resolve) => {
      res.on('data', (d: Buffer) => { events.push(`data ${d}`); res.destroy(); events.push(`destroyed ${res.destroyed}`); });
      res.on('end', () => events.push('end'));
      res.on('close', () => { events.push('close'); resolve(); });
    });
    expect(events).toEqual(['data hello', 'destroyed true', 'close']);
    await expect.poll(() => up2.open.size).toBe(0);
  });
});

describe('a head in many small reads', () => {
  test('is copied a few times, not once per read: 20,000 one-byte reads, the head read whole', async () => {
    // (each read copied the head's bytes before it: 64 KiB in one-byte reads was 2 GB of copies
    // for an upstream, or a proxy, that trickles its head)
    const head = b(`HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Long: ${'v'.repeat(20_000)}\r\nContent-Length: 2\r\n\r\nok`);
    const socket = new Duplex({ read() {}, write(_c, _e, cb) { cb(); } });
    let copied = 0;
    const concat = Buffer.concat;
    Buffer.concat = ((list: readonly Uint8Array[], total?: number) => {
      const out = concat(list, total);
      copied += out.length;
      return out;
    }) as typeof Buffer.concat;
    let res: Awaited<ReturnType<typeof requestUpstream>['response']>;
    try {
      const req = requestUpstream({ hostname: '127.0.0.1', port: 1, path: '/', headers: {}, body: Buffer.alloc(0), createConnection: () => socket });
      for (let i = 0; i < head.length; i++) socket.push(head.subarray(i, i + 1));
      res = await req.response;
    } finally {
      Buffer.concat = concat;
    }
    expect([res.statusCode, res.headers['x-long'].length, res.headers['content-length']]).toEqual([200, 20_000, '2']);
    expect(copied).toBeLessThan(4 * head.length);
    const body: Buffer[] = [];
    res.on('data', (x: Buffer) => body.push(Buffer.from(x)));
    await new Promise((r) => res.on('end', r));
    expect(Buffer.concat(body).toString()).toBe('ok');
    socket.destroy();
  });
});

describe('over TLS', () => {
  test('an https upstream: the certificate is checked (rejected unless trusted), then the answer as over TCP', async () => {
    const up = new FakeUpstream(true);
    await up.listen();
    try {
      up.scripts.set('m', { pieces: [b('data: {"a":1}\n\n'), b('data: [DONE]\n\n')] });
      const ask = (ca?: Buffer) => requestUpstream({ protocol: 'https:', hostname: '127.0.0.1', port: Number(new URL(up.url).port), path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json' }, body: Buffer.from('{"model":"m"}'), ca });
      await expect(ask().response).rejects.toThrow(/self-signed certificate/);
      const res = await ask(readFileSync(TEST_CERT)).response;
      const parts: Buffer[] = [];
      await new Promise<void>((resolve) => {
        res.on('data', (d: Buffer) => parts.push(Buffer.from(d)));
        res.on('end', resolve);
      });
      expect([res.statusCode, Buffer.concat(parts).toString()]).toEqual([200, 'data: {"a":1}\n\ndata: [DONE]\n\n']);
      await up.noSockets();
    } finally {
      await up.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// The findings of issue 27 on the upstream client, each failing on the client before it

/** An answer whose head the client refuses: the response promise rejects with `why`, the socket closed. */
async function headRefused(answer: string, why: string) {
  const up = await rawServer(b(answer), []);
  const req = requestUpstream({ hostname: '127.0.0.1', port: up.port, path: '/', headers: {}, body: Buffer.alloc(0) });
  await expect(req.response).rejects.toThrow(new UpstreamProtocolError(why));
  expect((req.socket as net.Socket).destroyed).toBe(true);
}

describe('issue 27, finding 4: ambiguous framing is refused, not guessed', () => {
  test.each([
    ['both Transfer-Encoding and Content-Length', 'Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n', 'both Transfer-Encoding and Content-Length'],
    ['a duplicate Content-Length (the same value)', 'Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello', 'a duplicate Content-Length'],
    ['a duplicate Content-Length, the body cut short', 'Content-Length: 20\r\nContent-Length: 20\r\n\r\n{"half":', 'a duplicate Content-Length'],
    ['an invalid Content-Length', 'Content-Length: 5x\r\n\r\nhello', 'an invalid Content-Length "5x"'],
    ['Content-Length: 5, 5', 'Content-Length: 5, 5\r\n\r\nhello', 'an invalid Content-Length "5, 5"'],
    ['Transfer-Encoding gzip', 'Transfer-Encoding: gzip\r\n\r\nhello', 'Transfer-Encoding "gzip" (only chunked is read)'],
  ])('%s: the response promise rejects, the socket is closed', (_, rest, why) => headRefused(`HTTP/1.1 200 OK\r\n${rest}`, `the upstream's response head is malformed: ${why}`));
});

describe('issue 27, finding 5: the head and the chunks are read as strictly as llhttp', () => {
  test.each([
    ['a head of 100 KiB in one write', `HTTP/1.1 200 OK\r\nX-Big: ${'x'.repeat(100 * 1024)}\r\nContent-Length: 2\r\n\r\nok`, "the upstream's response head is over 65536 bytes"],
    ['101 header fields', `HTTP/1.1 200 OK\r\n${'X-A: 1\r\n'.repeat(101)}\r\n`, "the upstream's response head is malformed: more than 100 header fields"],
    ['a folded line', 'HTTP/1.1 200 OK\r\nX-A: 1\r\n 2\r\n\r\n', 'the upstream\'s response head is malformed: a folded header line: " 2"'],
    ['a bare LF', 'HTTP/1.1 200 OK\nContent-Length: 2\n\nok', 'the upstream\'s response head is malformed: a bare LF in line "HTTP/1.1 200 OK\\n"'],
    ['a bare CR', 'HTTP/1.1 200 OK\r\nX-A: 1\rContent-Length: 2\r\n\r\nok', 'the upstream\'s response head is malformed: a CR without LF in line "X-A: 1\\rC"'],
    ['a header name with a space', 'HTTP/1.1 200 OK\r\nX A: 1\r\n\r\n', 'the upstream sent a malformed header line: "X A: 1"'],
    ['a header name with (', 'HTTP/1.1 200 OK\r\nX(A): 1\r\n\r\n', 'the upstream sent a malformed header line: "X(A): 1"'],
    ['a control byte in a value', 'HTTP/1.1 200 OK\r\nX-A: a\u0001b\r\n\r\n', "the upstream's response head is malformed: byte 0x1 in the value of header X-A"],
    ['a 101', 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n', "the upstream's response head is malformed: a 101 Switching Protocols (the gateway asked for no upgrade)"],
    ['interim heads past 64 KiB in all', `${'HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n'.repeat(2000)}HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok`, "the upstream's response head is over 65536 bytes"],
  ])('%s: the response promise rejects, the socket is closed', (_, answer, why) => headRefused(answer, why));

  test.each([
    ['"5 ff" (llhttp: invalid chunk size; read as 5 before)', '5 ff\r\nhello\r\n0\r\n\r\n', '', 'malformed at byte 1: byte 0x20 in a chunk size'],
    ['unbounded chunk extensions', `5;x=${'e'.repeat(70_000)}\r\nhello\r\n0\r\n\r\n`, '', 'malformed at byte 4098: chunk extensions over 4096 bytes'],
    ['unbounded trailers', `5\r\nhello\r\n0\r\nx: ${'t'.repeat(70_000)}\r\n\r\n`, 'hello', `malformed at byte ${13 + 16_384}: trailers over 16384 bytes`],
  ])('%s: the body ends in an error after the payload before it', async (_, body, payload, why) => {
    const up = await rawServer(b(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${body}`), []);
    const r = await fetchRaw(up.port);
    expect([r.status, r.body, r.ended]).toEqual([200, payload, `error: the upstream's chunked body is ${why}`]);
  });
});

describe('issue 27, finding 6: the request head is checked as the bytes it is written as', () => {
  const ask = (o: Partial<Parameters<typeof requestUpstream>[0]>) => () => requestUpstream({ hostname: '127.0.0.1', port: 9, path: '/', headers: {}, body: Buffer.alloc(0), ...o });
  test.each([
    ['U+010D U+010A in a value (Latin-1: CR LF)', { headers: { authorization: 'Bearer k\u010d\u010ax-injected: 1' } }, 'requestUpstream: header "authorization" has a character HTTP does not allow'],
    ['a NUL in a value', { headers: { 'x-a': 'a\u0000' } }, 'requestUpstream: header "x-a" has a character HTTP does not allow'],
    ['DEL in a value', { headers: { 'x-a': 'a\u007f' } }, 'requestUpstream: header "x-a" has a character HTTP does not allow'],
    ['a character past U+00FF', { headers: { 'x-a': 'é€' } }, 'requestUpstream: header "x-a" has a character HTTP does not allow'],
    ['CR LF in the path', { path: '/v1\r\nx-injected: 1' }, 'requestUpstream: the path "/v1\\r\\nx-injected: 1" must start with / and hold visible ASCII only (percent-encode the rest)'],
    ['a space in the path', { path: '/a b' }, 'requestUpstream: the path "/a b" must start with / and hold visible ASCII only (percent-encode the rest)'],
    ['a path without /', { path: 'v1' }, 'requestUpstream: the path "v1" must start with / and hold visible ASCII only (percent-encode the rest)'],
    ['a host with CR LF', { hostname: 'a\r\nx: 1' }, 'requestUpstream: "a\\r\\nx: 1" is not a host name or IP address'],
    ['a host with a space', { hostname: 'a b' }, 'requestUpstream: "a b" is not a host name or IP address'],
    ['port 0', { port: 0 }, 'requestUpstream: port 0 is not 1..65535'],
    ['protocol ftp:', { protocol: 'ftp:' as 'http:' }, 'requestUpstream: protocol "ftp:" (http: or https:)'],
  ])('%s: TypeError, no connection', (_, o, why) => {
    expect(ask(o)).toThrow(new TypeError(why));
  });

  test('what HTTP allows passes as its bytes: tab, obs-text, an IPv6 host, a host name', async () => {
    const up = await rawServer(b('HTTP/1.1 204 No Content\r\n\r\n'), []);
    const req = requestUpstream({ hostname: '127.0.0.1', port: up.port, path: '/a%20b?c=d&e=~', headers: { 'x-a': 'tab\there, caf\u00e9' }, body: Buffer.alloc(0) });
    expect((await req.response).statusCode).toBe(204);
    expect(up.seen[0].toString('latin1')).toBe(`POST /a%20b?c=d&e=~ HTTP/1.1\r\nhost: 127.0.0.1:${up.port}\r\nx-a: tab\there, caf\u00e9\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
    for (const hostname of ['[::1]', '::1', 'localhost', 'local_host-1.localhost.']) requestUpstream({ hostname, port: 9, path: '/', headers: {}, body: Buffer.alloc(0), createConnection: () => new PassThrough() }).destroy();
  });
});
