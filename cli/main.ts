// The `seam-stream` command.
//   seam-stream demo                 a built-in multilingual model stream, cut at every byte
//   seam-stream bench [--full] [--only utf8,sse,text] [--write FILE]
//                                    benchmarks against the usual alternatives (source checkout)
//   seam-stream decode [--sse|--lines|--ndjson|--text] [--lenient]
//                                    decode standard input and print what each layer sees
// It loads the library by its package name, as any user of the package does.
import { bench } from './bench.js';
import { decode } from './decode.js';
import { demo } from './demo.js';

const usage =
  'usage: seam-stream demo | seam-stream bench [--full] [--only utf8,sse,text] [--write FILE] | seam-stream decode [--sse|--lines|--ndjson|--text] [--lenient] < input';

const [cmd, ...rest] = process.argv.slice(2);
if (rest.includes('--help') || rest.includes('-h')) {
  // help for a command: print it, and neither run benchmarks nor wait for standard input
  console.log(usage);
} else {
  switch (cmd) {
    case 'demo':
      demo();
      break;
    case 'bench':
      await bench(rest);
      break;
    case 'decode':
      decode(rest);
      break;
    default:
      console.log(usage);
      if (cmd !== undefined && cmd !== 'help' && cmd !== '--help' && cmd !== '-h') process.exitCode = 1;
  }
}
