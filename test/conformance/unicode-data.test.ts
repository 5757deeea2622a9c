import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { graphemeCases, normalizationRows, readData } from './unicode-data.js';

// The vendored files are the Unicode Character Database 17.0.0 test files, unchanged (their
// header carries the Unicode terms of use).
const SHA256 = {
  'GraphemeBreakTest.txt': 'e2d134d2c52919bace503ebb6a551c1855fe1a1faec18478c78fff254a1793ec',
  'NormalizationTest.txt': '5019ffd530751a741900c849c0e010332f142a3612234639bd200b82138a87db',
};

describe('vendored Unicode 17.0.0 test data', () => {
  for (const [name, hash] of Object.entries(SHA256)) {
    it(`${name} is the published file`, () => {
      const text = readData(name);
      expect(createHash('sha256').update(text, 'utf8').digest('hex')).toBe(hash);
      expect(text).toContain(`# ${name.replace('.txt', '')}-17.0.0.txt`);
      expect(text).toContain('https://www.unicode.org/terms_of_use.html');
    });
  }
  it('parses to the expected number of cases', () => {
    expect(graphemeCases()).toHaveLength(766);
    expect(normalizationRows()).toHaveLength(20034);
  });
});
