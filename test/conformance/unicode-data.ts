// Readers for the vendored Unicode 17.0.0 test files in test/data/unicode-17.0.0/.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const DATA_DIR = fileURLToPath(new URL('../data/unicode-17.0.0/', import.meta.url));

export function readData(name: string): string {
  return readFileSync(DATA_DIR + name, 'utf8');
}

const fromHex = (hex: string): string => String.fromCodePoint(parseInt(hex, 16));

export interface GraphemeCase {
  line: number;
  /** The code points of the case, as strings. */
  codePoints: string[];
  /** breaks[k]: is there a boundary before codePoints[k] (k = codePoints.length: at the end). */
  breaks: boolean[];
  /** The expected clusters. */
  clusters: string[];
}

export function graphemeCases(): GraphemeCase[] {
  const out: GraphemeCase[] = [];
  readData('GraphemeBreakTest.txt').split('\n').forEach((raw, idx) => {
    const body = raw.split('#')[0].trim();
    if (!body) return;
    const tokens = body.split(/\s+/);
    const codePoints: string[] = [];
    const breaks: boolean[] = [];
    for (const t of tokens) {
      if (t === '÷') breaks.push(true);
      else if (t === '×') breaks.push(false);
      else codePoints.push(fromHex(t));
    }
    const clusters: string[] = [];
    let cur = '';
    codePoints.forEach((cp, k) => {
      if (k > 0 && breaks[k]) {
        clusters.push(cur);
        cur = '';
      }
      cur += cp;
    });
    clusters.push(cur);
    out.push({ line: idx + 1, codePoints, breaks, clusters });
  });
  return out;
}

export interface NormalizationRow {
  line: number;
  /** c1..c5 as in NormalizationTest.txt (index 0 is c1). */
  c: [string, string, string, string, string];
}

export function normalizationRows(): NormalizationRow[] {
  const out: NormalizationRow[] = [];
  readData('NormalizationTest.txt').split('\n').forEach((raw, idx) => {
    const body = raw.split('#')[0].trim();
    if (!body || body.startsWith('@')) return;
    const fields = body.split(';').slice(0, 5).map((f) => f.trim().split(' ').map(fromHex).join(''));
    if (fields.length !== 5) throw new Error(`NormalizationTest.txt line ${idx + 1}: ${raw}`);
    out.push({ line: idx + 1, c: fields as NormalizationRow['c'] });
  });
  return out;
}

export { rng } from '../helpers/random.js';

/** Cuts `s` into random pieces of 0..maxLen UTF-16 units (cuts may fall between surrogate halves). */
export function randomPieces(s: string, next: () => number, maxLen = 4): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < s.length) {
    const len = Math.floor(next() * (maxLen + 1));
    out.push(s.slice(i, i + len));
    i += len;
  }
  return out;
}
