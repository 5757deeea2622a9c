// `seam-stream decode`: decodes standard input and prints what each layer sees.
import { readFileSync } from 'node:fs';
import { LineDecoder, NdjsonDecoder, SseParser, TextAssembler, Utf8DecodeError, Utf8Decoder } from 'seam-stream';

export function decode(argv: string[]): void {
  const fatal = !argv.includes('--lenient');
  const input = readFileSync(0);
  try {
    if (argv.includes('--sse')) {
      const p = new SseParser({ fatal, onComment: (c) => console.log(JSON.stringify({ comment: c })) });
      for (const e of [...p.push(input), ...p.flush()]) console.log(JSON.stringify(e));
      if (p.truncated) console.error('warning: the stream ended inside an event (truncated)');
    } else if (argv.includes('--ndjson')) {
      const d = new NdjsonDecoder({ fatal });
      for (const v of [...d.push(input), ...d.flush()]) console.log(JSON.stringify(v));
    } else if (argv.includes('--lines')) {
      const d = new LineDecoder({ fatal });
      for (const l of [...d.push(input), ...d.flush()]) console.log(JSON.stringify(l));
    } else {
      const d = new Utf8Decoder({ fatal });
      const a = new TextAssembler();
      a.push(d.push(input) + d.flush());
      const { text, ...report } = a.finish();
      process.stdout.write(text + '\n');
      console.error(JSON.stringify(report));
    }
  } catch (e) {
    if (e instanceof Utf8DecodeError) {
      console.error(`seam-stream: ${e.message}`);
      process.exitCode = 2;
      return;
    }
    throw e;
  }
}
