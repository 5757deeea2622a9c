// A capture saved with `curl -i` begins with the HTTP response head: decode and check split it off
// and read the stream from the body (offsets count from there, and they say so); an answer whose
// status is not a success is the server's error (exit 5), its body never printed as the answer.
import zlib from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { BEDROCK_FIXTURES } from '../helpers/bedrock-fixtures.js';
import { file, noStack, ollamaCapture, openaiCapture, run, start, tempDir, writer } from './helpers.js';

let dir: string;
beforeAll(() => {
  dir = tempDir();
});

const DELTAS = ['Grüße ', '👩', '\u200d🔬', ' 🇰', '🇷 ', 'cafe', '\u0301', '.'];
const TEXT = DELTAS.join('').normalize('NFC');
const HEAD = 'HTTP/2 200 \r\ncontent-type: text/event-stream; charset=utf-8\r\ncache-control: no-cache\r\n\r\n';
const with_ = (head: string, body: Uint8Array | string) => Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(body)]);
const note = (status: string, bytes: number) =>
  `seam-stream: the input begins with an HTTP response head (${status}; ${bytes} bytes, as curl -i saves it): the stream is read from the body after it, and byte offsets count from there\n`;

describe('an HTTP response head at the top of a capture (curl -i)', () => {
  it('decode: the head is split off and said; the text is the stream\'s, from a file and dripped through a pipe', async () => {
    const bytes = with_(HEAD, openaiCapture(DELTAS));
    const path = file(dir, 'curl-i.sse', bytes);
    const r = await run(['decode', path]);
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: TEXT, stderr: note('HTTP/2 200', HEAD.length) });
    // a byte at a time through the head, and the rest in pieces
    const cuts = [...Array.from({ length: HEAD.length + 8 }, (_, i) => i + 1), 200, 400];
    const w = writer(path, cuts, 1);
    const p = await run(['decode', '--report', '--json'], { stdin: w });
    const report = JSON.parse(p.stderr);
    expect({ code: p.code, stdout: p.stdout }).toEqual({ code: 0, stdout: TEXT });
    expect(report).toMatchObject({ format: 'openai', sniffed: true, status: 'done', bytes: bytes.length - HEAD.length, httpHead: { statusLine: 'HTTP/2 200', status: 200, bytes: HEAD.length } });
  });

  it('check: the counts and offsets are the body\'s, and the head is not a list of unknown fields', async () => {
    const body = openaiCapture(DELTAS);
    const path = file(dir, 'curl-i-check.sse', with_(HEAD, body));
    const r = await run(['check', path]);
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
      code: 0, stderr: '',
      stdout: `${path}: openai (sniffed) after an HTTP response head (HTTP/2 200; ${HEAD.length} bytes, skipped: the counts and offsets are the body's), ${body.length.toLocaleString('en-US')} bytes, 26 lines, 11 events, 2 heartbeats, 15 graphemes of text, completed (finish reason "stop")\nclean\n`,
    });
    // with --format too
    const f = await run(['check', '--json', '--format', 'openai', path]);
    expect(JSON.parse(f.stdout)).toMatchObject({ clean: true, exitCode: 0, bytes: body.length, httpHead: { status: 200, bytes: HEAD.length } });
  });

  it('a damaged body: the offset named is the body\'s, and the message before it says where the body begins', async () => {
    const body = Buffer.from(openaiCapture(DELTAS));
    const bad = body.indexOf('Gr') + 2;
    body[bad] = 0xff;
    const r = await run(['decode', file(dir, 'curl-i-bad.sse', with_(HEAD, body))]);
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' });
    expect(r.stderr).toBe(`${note('HTTP/2 200', HEAD.length)}seam-stream: Invalid UTF-8 at byte offset ${bad} (bytes from there: FF BC C3 9F) (--lenient reads it as U+FFFD and goes on)\n`);
  });

  it('several heads (100 Continue, then the answer\'s), LF line ends, and binary and NDJSON bodies', async () => {
    const heads = 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\n\r\n';
    const o = await run(['decode', file(dir, 'ollama.txt', with_(heads, ollamaCapture(DELTAS)))]);
    expect({ code: o.code, stdout: o.stdout, stderr: o.stderr }).toEqual({ code: 0, stdout: TEXT, stderr: note('HTTP/1.1 200 OK', heads.length) });
    const f = BEDROCK_FIXTURES.find((x) => x.name === 'bedrock-tools')!;
    const lf = 'HTTP/1.1 200 OK\nContent-Type: application/vnd.amazon.eventstream\n\n';
    const b = await run(['decode', file(dir, 'bedrock.bin', with_(lf, f.bytes))]);
    expect({ code: b.code, stdout: b.stdout, stderr: b.stderr }).toEqual({ code: 0, stdout: f.expected.text.normalize('NFC'), stderr: note('HTTP/1.1 200 OK', lf.length) });
    const c = await run(['check', '--json', file(dir, 'bedrock.bin', with_(lf, f.bytes))]);
    expect(JSON.parse(c.stdout)).toMatchObject({ format: 'bedrock', clean: true, toolCalls: 2, httpHead: { status: 200, bytes: lf.length } });
  });

  it('an answer whose status is not a success: the server\'s error (exit 5), the body never printed as the text', async () => {
    const cases: [string, string, string][] = [
      ['HTTP/2 429 \r\ncontent-type: application/json\r\n\r\n', '{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}\n', 'HTTP/2 429: Rate limit reached (rate_limit_exceeded)'],
      ['HTTP/1.1 403 Forbidden\r\n\r\n', '{"message":"The security token included in the request is invalid."}', 'HTTP/1.1 403 Forbidden: The security token included in the request is invalid.'],
      ['HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\n\r\n', '<html><head><title>502 Bad Gateway</title></head>\r\n<body>nginx</body></html>\r\n', 'HTTP/1.1 502 Bad Gateway: <html><head><title>502 Bad Gateway</title></head>'],
      ['HTTP/1.1 401 Unauthorized\r\n\r\n', '', 'HTTP/1.1 401 Unauthorized, with an empty body'],
    ];
    for (const [head, body, said] of cases) {
      const path = file(dir, 'failed.txt', with_(head, body));
      const [status, rest] = said.split(/(?=[:,] )/);
      const message = `the server answered ${status} (the HTTP response head at the top of the input), not a stream${rest}`;
      const d = await run(['decode', path]);
      expect({ code: d.code, stdout: d.stdout, stderr: d.stderr }).toEqual({ code: 5, stdout: '', stderr: `seam-stream: ${message}\n` });
      const s = await run(['decode', '--format', 'anthropic', '--report', '--json'], { input: with_(head, body) });
      expect({ code: s.code, stdout: s.stdout, lines: s.stderr.split('\n').length }).toEqual({ code: 5, stdout: '', lines: 3 });
      expect(JSON.parse(s.stderr.split('\n')[1])).toMatchObject({ status: 'failed', exitCode: 5, httpHead: { statusLine: status } });
      const c = await run(['check', '--json', path]);
      expect(JSON.parse(c.stdout)).toMatchObject({ exitCode: 5, problems: [{ kind: 'provider', offset: 0, message }] });
      expect(c.code).toBe(5);
      expect(noStack(d.stderr + s.stderr + c.stderr)).toBe(true);
    }
  });

  it('a head with no body after it: the body is said to be empty (exit 3)', async () => {
    const head = 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n';
    const r = await run(['decode'], { input: head });
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
      code: 3, stdout: '',
      stderr: `${note('HTTP/1.1 200 OK', head.length)}seam-stream: the body after the HTTP response head of standard input is empty (0 bytes): there is no stream to decode\n`,
    });
    const c = await run(['check', '--json'], { input: head });
    expect(JSON.parse(c.stdout).problems).toEqual([{ kind: 'empty', offset: 0, message: 'the body after the HTTP response head of standard input is empty (0 bytes)' }]);
  });

  it('--format text and lines take the head for text, as it is', async () => {
    const bytes = with_('HTTP/1.1 200 OK\r\n\r\n', 'hello\n');
    const r = await run(['decode', '--format', 'lines', '-'], { input: bytes });
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: 'HTTP/1.1 200 OK\n\nhello\n', stderr: '' });
  });

  describe('a body saved as it came (curl -i --raw, a TCP capture): its chunked coding and compression undone', () => {
    const body = Buffer.from(openaiCapture(DELTAS));
    /** `b` in HTTP/1.1's chunked coding, a chunk per `size` bytes (the second with an extension), then a trailer. */
    const chunked = (b: Uint8Array, size: number) => {
      const parts: Buffer[] = [];
      for (let i = 0, k = 0; i < b.length; i += size, k++) {
        const piece = b.subarray(i, i + size);
        parts.push(Buffer.from(`${piece.length.toString(16)}${k === 1 ? ';name="x"' : ''}\r\n`, 'latin1'), Buffer.from(piece), Buffer.from('\r\n'));
      }
      parts.push(Buffer.from('0\r\nx-trailer: 1\r\n\r\n'));
      return Buffer.concat(parts);
    };
    /** A read a byte. */
    const dripCuts = (n: number) => Array.from({ length: n - 1 }, (_, i) => i + 1);
    const head = (more: string) => `HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n${more}\r\n`;
    const noteOf = (h: string, undone: string) => `seam-stream: the input begins with an HTTP response head (HTTP/1.1 200 OK; ${h.length} bytes, as curl -i saves it): the stream is read from the body after it, ${undone} undone (as the head says), and byte offsets count in the body so decoded\n`;

    it('chunked: the text is the stream\'s, read whole and a byte a read; check counts the decoded body', async () => {
      const h = head('Transfer-Encoding: chunked\r\n');
      const bytes = with_(h, chunked(body, 100));
      const path = file(dir, 'raw-chunked.sse', bytes);
      const r = await run(['decode', path]);
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: TEXT, stderr: noteOf(h, 'its chunked transfer coding') });
      const dripped = await run(['decode', '--report', '--json'], { stdin: writer(path, dripCuts(bytes.length), 0) });
      expect({ code: dripped.code, stdout: dripped.stdout }).toEqual({ code: 0, stdout: TEXT });
      expect(JSON.parse(dripped.stderr.split('\n').find((l) => l.startsWith('{'))!)).toMatchObject({ status: 'done', bytes: body.length, httpHead: { undone: { chunked: true, encoding: '' } } });
      const c = await run(['check', path]);
      expect({ code: c.code, stdout: c.stdout }).toEqual({
        code: 0,
        stdout: `${path}: openai (sniffed) after an HTTP response head (HTTP/1.1 200 OK; ${h.length} bytes, skipped: the counts and offsets are the body's, its chunked coding undone), ${body.length.toLocaleString('en-US')} bytes, 26 lines, 11 events, 2 heartbeats, 15 graphemes of text, completed (finish reason "stop")\nclean\n`,
      });
    });

    it('compressed (gzip, deflate, Brotli, zstd where Node has it), and chunked too: the text is the stream\'s', async () => {
      const codings: [string, (b: Buffer) => Buffer][] = [['gzip', zlib.gzipSync], ['deflate', zlib.deflateSync], ['br', zlib.brotliCompressSync]];
      const zstd = (zlib as unknown as { zstdCompressSync?: (b: Buffer) => Buffer }).zstdCompressSync;
      if (zstd) codings.push(['zstd', zstd]);
      for (const [name, compress] of codings) {
        for (const isChunked of [false, true]) {
          const h = head(`Content-Encoding: ${name}\r\n${isChunked ? 'Transfer-Encoding: chunked\r\n' : ''}`);
          const packed = compress(body);
          const bytes = with_(h, isChunked ? chunked(packed, 50) : packed);
          const path = file(dir, `raw-${name}.sse`, bytes);
          const r = await run(['decode', path]);
          const undone = `${isChunked ? 'its chunked transfer coding and ' : ''}its ${name} compression`;
          expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }, `${name} ${isChunked}`).toEqual({ code: 0, stdout: TEXT, stderr: noteOf(h, undone) });
          const dripped = await run(['decode'], { stdin: writer(path, dripCuts(bytes.length), 0) });
          expect({ code: dripped.code, stdout: dripped.stdout }, `${name} ${isChunked} dripped`).toEqual({ code: 0, stdout: TEXT });
        }
      }
    });

    it('a body that curl decoded already (curl -i keeps the head\'s Transfer-Encoding, curl -i --compressed its Content-Encoding): read as it is', async () => {
      for (const more of ['Transfer-Encoding: chunked\r\n', 'Content-Encoding: gzip\r\n', 'Content-Encoding: br\r\nTransfer-Encoding: chunked\r\n']) {
        const h = head(more);
        const r = await run(['decode', file(dir, 'decoded.sse', with_(h, body))]);
        expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }, more).toEqual({ code: 0, stdout: TEXT, stderr: note('HTTP/1.1 200 OK', h.length) });
      }
    });

    it('a live stream in chunks: the first chunk\'s text is printed before the next chunk comes', async () => {
      const h = head('Transfer-Encoding: chunked\r\n');
      const events = body.toString('latin1').split(/(?<=\n\n)/);
      const first = events.findIndex((e) => e.includes('Gr'));
      const wire = (e: string) => `${Buffer.byteLength(e, 'latin1').toString(16)}\r\n${e}\r\n`;
      // (the body's first chunk, which holds the first text, and nothing after it yet)
      const opening = h + wire(events.slice(0, first + 1).join(''));
      const s = start(['decode', '-'], { stdin: 'open' });
      s.child.stdin!.write(Buffer.from(opening, 'latin1'));
      await s.waitStdout((t) => t.startsWith('Grüße'));
      s.child.stdin!.end(Buffer.from(events.slice(first + 1).map(wire).join('') + '0\r\n\r\n', 'latin1'));
      const r = await s.done;
      expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 0, stdout: TEXT });
    });

    it('an answer whose status is not a success, chunked: its error read from the decoded body', async () => {
      const h = 'HTTP/1.1 429 Too Many Requests\r\nTransfer-Encoding: chunked\r\n\r\n';
      const r = await run(['decode', file(dir, 'raw-429.txt', with_(h, chunked(Buffer.from('{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}'), 16)))]);
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
        code: 5, stdout: '',
        stderr: 'seam-stream: the server answered HTTP/1.1 429 Too Many Requests (the HTTP response head at the top of the input), not a stream: Rate limit reached (rate_limit_exceeded)\n',
      });
    });

    it('a broken chunked coding or compressed body: an error that says so (exit 1), the text before it printed; a body cut inside a chunk is a cut stream', async () => {
      const h = head('Transfer-Encoding: chunked\r\n');
      const good = chunked(body, 100);
      // the third chunk's size line broken
      const third = good.indexOf('\r\n64\r\n', good.indexOf('\r\n64') + 4) + 2;
      const bad = Buffer.concat([good.subarray(0, third), Buffer.from('zz'), good.subarray(third + 2)]);
      const r = await run(['decode', file(dir, 'raw-broken.sse', with_(h, bad))]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`seam-stream: the body's chunked transfer coding (the head's Transfer-Encoding) is broken: no chunk size at byte ${third} of the body as it came (its chunk sizes counted)\n`);
      // the text of the first two chunks (read in one read with the broken size line) printed
      const before = await run(['decode', '--allow-truncated', '--format', 'openai'], { input: body.subarray(0, 200) });
      expect(before.stdout.length).toBeGreaterThan(0);
      expect(r.stdout).toBe(before.stdout);
      expect(noStack(r.stderr)).toBe(true);
      // check lists it where the decoded body stops, after the problems before it, with decode's exit code
      const c = await run(['check', '--json', file(dir, 'raw-broken.sse', with_(h, bad))]);
      const report = JSON.parse(c.stdout);
      expect({ code: c.code, stderr: c.stderr, exitCode: report.exitCode, bytes: report.bytes }).toEqual({ code: 1, stderr: '', exitCode: 1, bytes: 200 });
      expect(report.problems).toContainEqual({ kind: 'coding', offset: 200, message: `the body's chunked transfer coding (the head's Transfer-Encoding) is broken: no chunk size at byte ${third} of the body as it came (its chunk sizes counted)` });
      // a damaged gzip body whose garbage decode stops at first: check stops there too
      const g0 = head('Content-Encoding: gzip\r\n');
      const long = Buffer.from(openaiCapture(Array.from({ length: 2000 }, (_, i) => `${i} `)));
      const z0 = zlib.gzipSync(long);
      z0[z0.length >> 1] ^= 0xff;
      const gpath = file(dir, 'raw-bad-gzip-long.sse', with_(g0, z0));
      const [dg, cg] = await Promise.all([run(['decode', gpath]), run(['check', '--json', gpath])]);
      expect(cg.code).toBe(dg.code);
      expect(JSON.parse(cg.stdout).exitCode).toBe(dg.code);
      // damaged gzip data
      const z = head('Content-Encoding: gzip\r\n');
      const packed = zlib.gzipSync(body);
      packed[packed.length >> 1] ^= 0xff;
      const g = await run(['decode', file(dir, 'raw-bad-gzip.sse', with_(z, packed))]);
      expect(g.code).toBe(1);
      expect(g.stderr).toMatch(/seam-stream: the body's gzip content \(the head's Content-Encoding\) cannot be decompressed: /);
      // cut inside a chunk: what came is read, and the stream is cut short (exit 3)
      const cut = good.subarray(0, good.length - 300);
      const t = await run(['decode', file(dir, 'raw-cut.sse', with_(h, cut))]);
      expect(t.code).toBe(3);
    });
  });
});

