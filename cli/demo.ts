// `seam-stream demo`: a built-in multilingual model stream, cut at every byte, decoded by a
// hand-written client and by seam.
import { SseParser, TextAssembler, wasmBackend, type SseEvent } from 'seam-stream';

const enc = new TextEncoder();

/** An OpenAI-shaped stream whose deltas end inside characters, clusters and NFC sequences. */
function demoStream(): { bytes: Uint8Array; deltas: string[] } {
  const deltas = [
    'Stream', 'ed ', 'text is ', 'not ', 'characters: ', 'cafe\u0301', ' (NFD é), ', '世界', ', ',
    '👩\u200d', '💻', ', ', '🇯', '🇵', ', ', '한', '\u1100\u1161\u11a8', ', ', 'क्', 'ष', ', ', 'e\u0301\u0323', '!',
  ];
  let s = ': keep-alive\r\n\r\n';
  deltas.forEach((d, i) => {
    const ev = `data: ${JSON.stringify({ id: 'chatcmpl-1', choices: [{ index: 0, delta: { content: d } }] })}`;
    s += i % 3 === 1 ? `${ev}\r\n\r\n` : i % 3 === 2 ? `${ev}\r\r` : `${ev}\n\n`; // CRLF, lone CR and LF
  });
  s += 'data: [DONE]\n\n';
  return { bytes: enc.encode(s), deltas };
}

/**
 * What a typical hand-written client does: decode each read on its own, normalize line ends,
 * split on blank lines.
 */
function naive(pieces: Uint8Array[]): { content: string; done: boolean } {
  let buf = '';
  let content = '';
  let done = false;
  for (const p of pieces) {
    // no `stream: true`: a cut character becomes U+FFFD; a CR and its LF in two reads make two line ends
    buf += new TextDecoder().decode(p).replace(/\r\n?/g, '\n');
    const parts = buf.split('\n\n');
    buf = parts.pop()!;
    for (const part of parts) {
      const data = part.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
      if (data === '[DONE]') done = true;
      else if (data) {
        try {
          content += JSON.parse(data).choices[0].delta.content;
        } catch {
          /* a broken event is lost */
        }
      }
    }
  }
  return { content, done };
}

/** seam: bytes → SSE events → deltas → whole graphemes in NFC. */
function withSeam(pieces: Uint8Array[]): { committed: string[]; done: boolean; report: ReturnType<TextAssembler['finish']> } {
  const parser = new SseParser();
  const text = new TextAssembler();
  const committed: string[] = [];
  let done = false;
  const onEvents = (events: SseEvent[]) => {
    for (const e of events) {
      if (e.data === '[DONE]') done = true;
      else committed.push(text.push(JSON.parse(e.data).choices[0].delta.content));
    }
  };
  for (const p of pieces) onEvents(parser.push(p));
  onEvents(parser.flush());
  return { committed, done, report: text.finish() };
}

export function demo(): void {
  const { bytes, deltas } = demoStream();
  const truth = deltas.join('').normalize('NFC');
  const cuttings: Uint8Array[][] = [[bytes]];
  for (let i = 1; i < bytes.length; i++) cuttings.push([bytes.subarray(0, i), bytes.subarray(i)]);
  cuttings.push(Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1)));

  let naiveBad = 0;
  let naiveFffd = 0;
  let naiveNoDone = 0;
  let seamBad = 0;
  const whole = withSeam([bytes]);
  for (const pieces of cuttings) {
    const n = naive(pieces);
    if (n.content.normalize('NFC') !== truth) naiveBad++;
    if (n.content.includes('\uFFFD')) naiveFffd++;
    if (!n.done) naiveNoDone++;
    const s = withSeam(pieces);
    const text = s.report.text;
    if (text !== truth || !text.startsWith(s.committed.join('')) || !s.done || s.report.sha256 !== whole.report.sha256) seamBad++;
  }
  const r = whole.report;
  const line = '─'.repeat(72);
  console.log(line);
  console.log(`seam demo: one ${bytes.length}-byte model stream (SSE with LF, CRLF and lone-CR event ends),`);
  console.log(`cut in ${cuttings.length} ways: whole, at every byte (${bytes.length - 1} two-piece splits), and one byte at a time.`);
  console.log(line);
  console.log(`decode each read, split on blank lines: ${naiveBad} of ${cuttings.length} cuttings give wrong text, ${naiveFffd} show U+FFFD, ${naiveNoDone} never see [DONE]`);
  console.log(`seam (SseParser + TextAssembler):       ${seamBad} of ${cuttings.length} cuttings differ from the whole stream`);
  console.log(line);
  console.log(`deltas as sent:      ${deltas.map((d) => JSON.stringify(d)).join(' ')}`);
  const drip = withSeam(cuttings[cuttings.length - 1]);
  console.log(`committed, fed 1 byte at a time: ${drip.committed.filter((c) => c).map((c) => JSON.stringify(c)).join(' ')} + at finish ${JSON.stringify(drip.report.text.slice(drip.committed.join('').length))}`);
  console.log(`final text:          ${r.text}`);
  console.log(`counts:              ${r.utf8Bytes} UTF-8 bytes, ${r.codePoints} code points, ${r.utf16Units} UTF-16 units, ${r.graphemes} graphemes; NFC changed the raw text: ${r.normalizationChanged}`);
  console.log(`sha256:              ${r.sha256}`);
  console.log(`core:                WebAssembly (${wasmBackend()})`);
  console.log(line);
  if (seamBad !== 0) process.exitCode = 1;
}
