// The peer's text layer, as the guides write it: each delta held back at its last grapheme
// cluster (Intl.Segmenter), the rest committed with NFC; the end commits what is held. Plain
// JavaScript, so that the browser page loads it as it is and the Node benchmarks import it.

/** A hold-back over `segmenter` (an Intl.Segmenter of graphemes): `push(delta)`, then `end()` for the whole text. */
export function holdBack(segmenter) {
  let held = '';
  let out = '';
  return {
    push(t) {
      if (t === '') return;
      const buf = held + t;
      let last = 0;
      for (const seg of segmenter.segment(buf)) last = seg.index;
      out += buf.slice(0, last).normalize('NFC');
      held = buf.slice(last);
    },
    end: () => out + held.normalize('NFC'),
  };
}
