// What the demo claims, checked: its exact counts, and each one computed again here by other code
// (the library's layers directly, the peer stack written anew, the counts derived from the bytes).
import { createParser } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import { SseParser, TextAssembler } from '../../bindings/index.js';
import { DELTAS, beforeDone, demoBytes, nastyPositions } from '../../cli/demo-stream.js';
import { file, run, tempDir } from './helpers.js';

const bytes = demoBytes();
const message = DELTAS.join('');
const nfc = message.normalize('NFC');
const seg = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const bounds = (s: string) => new Set([...[...seg.segment(s)].map((x) => x.index), s.length]);

/** The cuttings the demo reads: two pieces at each awkward position, all of them at once, byte by byte. */
function cuttings(): Uint8Array[][] {
  const positions = nastyPositions(bytes);
  const out = positions.map((p) => [bytes.subarray(0, p), bytes.subarray(p)]);
  const all: Uint8Array[] = [];
  let from = 0;
  for (const p of [...positions, bytes.length]) {
    all.push(bytes.subarray(from, p));
    from = p;
  }
  out.push(all, Array.from(bytes, (_, i) => bytes.subarray(i, i + 1)));
  return out;
}

/** Screen states ending inside a cluster of `target` (repeats and the final state left out). */
function halves(states: string[], target: string): number {
  const b = bounds(target);
  let n = 0;
  states.slice(0, -1).forEach((s, i) => {
    if (i > 0 && s === states[i - 1]) return;
    if (target.startsWith(s) && !b.has(s.length)) n++;
  });
  return n;
}

describe('the demo', () => {
  it('prints exactly these counts, in its table and as JSON, within seconds', async () => {
    const r = await run(['demo', '--json']);
    expect(r.code).toBe(0);
    expect(r.ms).toBeLessThan(5000);
    const d = JSON.parse(r.stdout);
    expect({ bytes: d.bytes, events: d.events, nastyPositions: d.nastyPositions, cuttings: d.cuttings }).toEqual({ bytes: 16656, events: 61, nastyPositions: 221, cuttings: 223 });
    expect(d.handWritten).toEqual({ wrongFinal: 223, withFffd: 92, lostEvents: 4, halfClusterCuttings: 57, halfClusterMoments: 57, noticesCutBeforeDone: false, bomCuttingsLosingFirstEvent: 2 });
    expect(d.stack).toEqual({ wrongFinal: 223, withFffd: 0, lostEvents: 0, halfClusterCuttings: 59, halfClusterMoments: 79, noticesCutBeforeDone: false, bomCuttingsLosingFirstEvent: 0, finalIsRawConcatenation: true });
    expect(d.seam).toEqual({ wrongFinal: 0, withFffd: 0, lostEvents: 0, halfClusterCuttings: 0, halfClusterMoments: 0, noticesCutBeforeDone: true, bomCuttingsLosingFirstEvent: 0 });
    expect(d.frames).toHaveLength(11);
    expect(d.finalText).toBe(nfc);
    expect(d.report).toMatchObject({ status: 'done', finishReason: 'stop', usage: { prompt_tokens: 24, completion_tokens: 61, total_tokens: 85 }, events: 61, graphemes: bounds(nfc).size - 1, normalizationChanged: true });

    const h = await run(['demo']);
    expect(h.code).toBe(0);
    const line = (label: string) => h.stdout.split('\n').find((l) => l.startsWith(label))!.slice(label.length).trim().split(/\s{2,}/);
    expect(line('final text ≠ NFC(message)')).toEqual(['223 of 223', '223 of 223 (no NFC)', '0 of 223']);
    expect(line('U+FFFD in the text')).toEqual(['92 of 223', '0 of 223', '0 of 223']);
    expect(line('events lost')).toEqual(['4', '0', '0']);
    expect(line('half a cluster on screen')).toEqual(['57 of 223', '59 of 223', '0 of 223']);
    expect(line('  (times, all cuttings)')).toEqual(['57', '79', '0']);
    expect(line('cut right before [DONE]')).toEqual(['ends as if complete', 'ends as if complete', 'status truncated (exit 3)']);
    expect(line('a read ending inside the BOM')).toEqual(['first event lost (2)', 'right: stripped once', 'right: stripped once']);
    expect(h.stdout).toContain('the stack shows half a cluster 11 times');
    expect(h.stdout).toMatch(/seam \(SseParser \+ TextAssembler\): 0 of 223 cuttings differ from NFC of the message/);
  });

  it('the cuttings: 221 awkward positions, from the bytes', () => {
    let cont = 0;
    let crlf = 0;
    for (let p = 1; p < bytes.length; p++) {
      if ((bytes[p] & 0xc0) === 0x80) cont++;
      if (bytes[p - 1] === 13 && bytes[p] === 10) crlf++;
    }
    const doneInside = 5; // '[DONE]' has 5 inner positions, once in the stream
    expect(cont + crlf + doneInside).toBe(221);
    expect(nastyPositions(bytes)).toHaveLength(221);
    const insideBom = nastyPositions(bytes).filter((p) => p < 3).length;
    expect(insideBom).toBe(2);
    // the hand-written decoder: U+FFFD whenever a read ends inside a character, except inside the BOM (that line is lost
    // instead), and in the two cuttings that end reads everywhere: the demo's 92
    expect(cont - insideBom + 2).toBe(92);
    // and the first event lost whenever a read ends inside the BOM: those two-piece cuttings and the two that cut everywhere
    expect(insideBom + 2).toBe(4);
  });

  it('seam, by its layers directly: every cutting gives NFC of the message and never shows half a cluster', () => {
    let wrong = 0;
    let half = 0;
    for (const pieces of cuttings()) {
      const p = new SseParser();
      const a = new TextAssembler();
      let shown = '';
      const states: string[] = [];
      let done = false;
      const take = (evs: { data: string }[]) => {
        for (const e of evs) {
          if (e.data === '[DONE]') done = true;
          else shown += a.push(JSON.parse(e.data).choices[0]?.delta?.content ?? '');
        }
      };
      for (const c of pieces) {
        take(p.push(c));
        states.push(shown);
      }
      take(p.flush());
      const final = a.finish().text;
      if (final !== nfc || !done) wrong++;
      half += halves(states, nfc);
      p.dispose();
    }
    expect({ wrong, half }).toEqual({ wrong: 0, half: 0 });
  });

  it('the careful stack, written again: 59 cuttings show half a cluster, 79 times; its final text is the raw concatenation', () => {
    let cuttingsWithHalf = 0;
    let moments = 0;
    let notNfc = 0;
    for (const pieces of cuttings()) {
      let text = '';
      const states: string[] = [];
      const decoder = new TextDecoder();
      const parser = createParser({
        onEvent: (e) => {
          if (e.data !== '[DONE]') text += JSON.parse(e.data).choices[0]?.delta?.content ?? '';
        },
      });
      for (const c of pieces) {
        parser.feed(decoder.decode(c, { stream: true }));
        states.push(text);
      }
      parser.feed(decoder.decode());
      if (text !== nfc) notNfc++;
      expect(text).toBe(message);
      const n = halves(states, message);
      if (n) cuttingsWithHalf++;
      moments += n;
    }
    expect({ cuttingsWithHalf, moments, notNfc }).toEqual({ cuttingsWithHalf: 59, moments: 79, notNfc: 223 });
  });

  it('cut right before [DONE]: seam-stream decode says truncated (exit 3)', async () => {
    const f = file(tempDir(), 'cut.sse', bytes.subarray(0, beforeDone(bytes)));
    const r = await run(['decode', f]);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe(nfc);
    expect(r.stderr).toBe(`seam-stream: The stream ended without its completion (data: [DONE]) after ${beforeDone(bytes)} bytes: the text is incomplete (--allow-truncated takes the text as it is, exit 0)\n`);
  });
});
