// What seam's SseRelay and ModelStream hold in JavaScript of an upstream's answer (heldBody): a
// stream of an SSE format or of AWS's event stream answered with one JSON body instead (a whole
// answer, an error object) is kept whole until its end, up to maxEventBytes, outside the core's
// memory that coreMemoryUsed counts. A stream counts those bytes in the streams' budget as they come.
// The library says the number itself (ModelStream's and SseRelay's jsonBodyBytes), which the relay
// (relay.mjs) reads; this restatement stays only for whole-answer.mjs until it reads the model
// stream's jsonBodyBytes too, and then goes.

const BOM = [0xef, 0xbb, 0xbf];

/**
 * For an answer of the format `facts` (describeFormat's): a function of each upstream read, in
 * order, to the bytes of it that the library keeps as a JSON body, as it decides (the first byte
 * past a BOM and white space is `{`, or `[` where the format's provider answers a JSON array:
 * then the rest of the answer is that body), or -1 once the answer is an event stream (nothing of
 * it, then or after: the function can be let go); null for a format of lines, which has no such
 * body (NDJSON's answer is a line, held in the core).
 */
export function heldBody(facts) {
  if (facts.framing === 'ndjson' || facts.framing === 'lines') return null;
  let state = 0; // 0: before the first byte that is not white space; 1: a JSON body; 2: an event stream
  let at = 0; // bytes read before the decision
  let bom = 0;
  return (chunk) => {
    if (state !== 0) return state === 1 ? chunk.length : -1;
    for (let i = 0; i < chunk.length; i++, at++) {
      const b = chunk[i];
      if (at === bom && at < 3 && b === BOM[at]) {
        bom++;
        continue;
      }
      if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) continue;
      state = b === 0x7b || (b === 0x5b && facts.arrayBody) ? 1 : 2;
      return state === 1 ? chunk.length - i : -1;
    }
    return 0;
  };
}
