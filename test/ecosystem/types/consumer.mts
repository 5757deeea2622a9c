// An ES module consumer: `import` resolves to dist/index.d.ts.
import {
  LineDecoder, SseDecoderStream, SseParser, TextAssembler, Utf8DecodeError, Utf8Decoder, convertOffset, countText, encodeSse,
  type FinalReport, type SseEvent,
} from 'seam-stream';

const parser = new SseParser({ maxEventBytes: 1 << 20, eof: 'dispatch', onComment: (c: string) => void c });
const events: SseEvent[] = [...parser.push(new Uint8Array([100, 97, 116, 97, 58, 10, 10])), ...parser.flush()];
const reader = parser.pushBytes(new Uint8Array(0));
const first: Uint8Array | undefined = reader.length > 0 ? reader.data(0) : undefined;
const wire: string = encodeSse({ data: 'a\nb', type: 'delta', id: '1' });
const lines: string[] = new LineDecoder({ maxLineBytes: 64 }).push(new Uint8Array(0));
const assembler = new TextAssembler();
const committed: string = assembler.push('e\u0301');
const report: FinalReport = assembler.finish({ expected: 'é' });
const graphemes: number = countText('👩‍💻').graphemes;
const offset: number = convertOffset('héllo', 2, 'utf16', 'utf8');
const stream: ReadableStream<SseEvent> = new ReadableStream<Uint8Array>().pipeThrough(new SseDecoderStream());
try {
  new Utf8Decoder().push(new Uint8Array([0xff]));
} catch (e) {
  if (e instanceof Utf8DecodeError) {
    const code: 'ERR_INVALID_UTF8' | 'ERR_TRUNCATED_UTF8' = e.code;
    void code;
  }
}
// @ts-expect-error: the decoders take bytes, not strings
new Utf8Decoder().push('text');

export { committed, events, first, graphemes, lines, offset, report, stream, wire };
