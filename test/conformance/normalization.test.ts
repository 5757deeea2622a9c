import { describe, expect, it } from 'vitest';
import { TextAssembler } from '../../bindings/text/assembler.js';
import { NfcCommitter } from '../../bindings/text/nfc.js';
import { normalizationRows, randomPieces, rng } from './unicode-data.js';

const rows = normalizationRows();
const SEED = 0x5eed17;

function viaNfcCommitter(pieces: string[], c: NfcCommitter): string {
  let out = '';
  for (const p of pieces) out += c.push(p);
  return out + c.flush();
}

function viaAssembler(pieces: string[], a: TextAssembler): string {
  let out = '';
  for (const p of pieces) out += a.push(p);
  const report = a.finish();
  expect(report.text.startsWith(out)).toBe(true);
  return report.text;
}

describe('NormalizationTest-17.0.0.txt, streamed', () => {
  it('has 20,034 rows', () => expect(rows).toHaveLength(20034));

  // c2 == NFC(c1) == NFC(c2) == NFC(c3); c4 == NFC(c4) == NFC(c5). seam's NFC is the runtime's
  // normalize applied to stable pieces, so its promise is the runtime's NFC of the whole text: that
  // is what is expected where the runtime's Unicode is older than 17.0 (Deno 2.9 normalizes U+1ACF
  // and other marks newer than its ICU as if their class were 0), and the file's value everywhere
  // the runtime agrees with it (on Node and Bun, every row: checked below).
  const fileNfc = (k: number, c: string[]) => (k <= 2 ? c[1] : c[3]);
  const expectedNfc = (k: number, c: string[]) => (c[k].normalize('NFC') === fileNfc(k, c) ? fileNfc(k, c) : c[k].normalize('NFC'));

  it("the runtime's own normalize agrees with the file on every row (but for Deno's older ICU)", () => {
    let disagree = 0;
    for (const row of rows) for (let k = 0; k < 5; k++) if (row.c[k].normalize('NFC') !== fileNfc(k, row.c)) disagree++;
    if ((globalThis as { Deno?: unknown }).Deno === undefined) expect(disagree).toBe(0);
    else expect(disagree).toBeLessThan(1000);
  });

  it('NfcCommitter: all rows, every column, in random pieces (seeded) and one unit at a time', () => {
    const next = rng(SEED);
    const committer = new NfcCommitter();
    let passed = 0;
    for (const row of rows) {
      for (let k = 0; k < 5; k++) {
        const want = expectedNfc(k, row.c);
        const pieces = randomPieces(row.c[k], next);
        expect(viaNfcCommitter(pieces, committer), `line ${row.line}, c${k + 1}, pieces ${JSON.stringify(pieces)} (seed ${SEED})`).toBe(want);
        expect(viaNfcCommitter(row.c[k].split(''), committer), `line ${row.line}, c${k + 1}, per unit`).toBe(want);
      }
      passed++;
    }
    expect(passed).toBe(20034);
    expect(committer.forcedCommits).toBe(0);
  });

  it('NfcCommitter: each row with a prefix and suffix, whole rows concatenated in random pieces', () => {
    // Rows back to back: a combining row after a starter row must still normalize as one text.
    const next = rng(SEED + 1);
    const committer = new NfcCommitter();
    for (let r = 0; r < rows.length; r += 50) {
      const batch = rows.slice(r, r + 50);
      const raw = batch.map((row) => 'a' + row.c[0] + row.c[4]).join('');
      expect(viaNfcCommitter(randomPieces(raw, next, 7), committer), `rows from line ${batch[0].line}`).toBe(raw.normalize('NFC'));
    }
  });

  it('TextAssembler: all rows, every column, in random pieces (seeded)', () => {
    const next = rng(SEED + 2);
    const assembler = new TextAssembler();
    let passed = 0;
    for (const row of rows) {
      for (let k = 0; k < 5; k++) {
        const pieces = randomPieces(row.c[k], next);
        expect(viaAssembler(pieces, assembler), `line ${row.line}, c${k + 1}, pieces ${JSON.stringify(pieces)} (seed ${SEED + 2})`).toBe(expectedNfc(k, row.c));
      }
      passed++;
    }
    expect(passed).toBe(20034);
    expect(assembler.forcedCommits).toBe(0);
  });
});
