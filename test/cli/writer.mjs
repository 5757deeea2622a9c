// A slow writer for the command's tests, run as a child whose standard output is the command's
// standard input:
//   node writer.mjs FILE CUTS DELAY_MS [HOLD_AT] [HEARTBEAT_MS]
// writes FILE in pieces ending at the byte offsets CUTS (comma-separated), DELAY_MS apart; before
// piece number HOLD_AT it says "held" on standard error and waits for a line on standard input;
// at the end it says "done", then (with HEARTBEAT_MS) writes SSE comments that often, forever.
//   node writer.mjs --long-line PREFIX BYTES
// writes PREFIX, then BYTES of 'x' in 1 MiB writes as fast as the reader takes them.
import { readFileSync } from 'node:fs';

process.stdout.on('error', () => process.exit(0));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const write = (b) => new Promise((r) => (process.stdout.write(b) ? r() : process.stdout.once('drain', r)));

if (process.argv[2] === '--long-line') {
  const total = Number(process.argv[4]);
  await write(Buffer.from(process.argv[3]));
  const mib = Buffer.alloc(1 << 20, 'x');
  for (let n = 0; n < total; n += mib.length) await write(n + mib.length <= total ? mib : mib.subarray(0, total - n));
  process.exit(0);
}

const bytes = readFileSync(process.argv[2]);
const cuts = process.argv[3] ? process.argv[3].split(',').map(Number) : [];
const delay = Number(process.argv[4] ?? 0);
const holdAt = process.argv[5] !== undefined && process.argv[5] !== '' ? Number(process.argv[5]) : -1;
const heartbeat = Number(process.argv[6] ?? 0);
const ends = [...cuts.filter((c) => c > 0 && c < bytes.length), bytes.length];
let start = 0;
for (let i = 0; i < ends.length; i++) {
  if (i === holdAt) {
    process.stderr.write('held\n');
    await new Promise((r) => process.stdin.once('data', r));
  }
  await write(bytes.subarray(start, ends[i]));
  start = ends[i];
  if (delay) await sleep(delay);
}
process.stderr.write('done\n');
if (heartbeat) for (;;) {
  await write(': ping\n\n');
  await sleep(heartbeat);
}
// (a pipe's writes may still be queued: exiting now would drop them, and the reader would see the
// input end early; the callback of an empty write comes once all before it were written)
process.stdout.write('', () => process.exit(0));
