// A JSON body in place of a model format's event stream (a whole answer, asked without streaming,
// or the provider's error body), as `decode --events` prints it: told from a stream by its first
// byte that is not white space, as the library's model stream tells it, kept (up to
// --max-event-bytes, where the stream stops), and at the input's end the events the answer is
// read as, each in the frame shape of its format.
import { describeFormat, jsonTooDeep, wholeAnswerBudget, type ModelFormat } from 'seam-stream';

const BOM = [0xef, 0xbb, 0xbf];

export class JsonBody {
  /** 'start' before the first byte that is not white space (or a BOM at the start); then a stream's, or a body's. */
  state: 'start' | 'stream' | 'body' = 'start';
  /** Where the body begins (its `{` or `[`), and the input's bytes so far. */
  at = 0;
  bytes = 0;
  private held: Uint8Array[] = [];
  private parts: Uint8Array[] = [];
  private kept = 0;
  private over = false;
  /** The bytes of a BOM read at the input's start. */
  private bomSoFar = 0;

  /** `hold`: white space before the first other byte is held, not framed (AWS's event stream, as the stream holds it); else it is framed as it comes (SSE: blank lines). */
  constructor(private readonly format: ModelFormat, private readonly fatal: boolean, private readonly maxBytes: number, private readonly hold: boolean) {}

  /**
   * A read: what of the input goes to the stream's framing now (the white space held before its
   * first other byte, and the read), or null while it is held or is the body's. White space held
   * alone is never framed: the stream frames none of it.
   */
  push(chunk: Uint8Array): Uint8Array | null {
    const from = this.bytes;
    this.bytes += chunk.length;
    if (this.state === 'stream') return chunk;
    if (this.state === 'body') {
      this.keep(chunk);
      return null;
    }
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      const at = from + i;
      // (a BOM at the input's start, whatever reads it came in)
      if (at < 3 && at === this.bomSoFar && b === BOM[at]) {
        this.bomSoFar++;
        continue;
      }
      if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) continue;
      const array = b === 0x5b && describeFormat(this.format).arrayBodyNote !== undefined;
      if (b === 0x7b || array) {
        this.state = 'body';
        this.at = at;
        this.held = [];
        this.keep(chunk.subarray(i));
        return null;
      }
      this.state = 'stream';
      const held = this.held;
      this.held = [];
      return held.length === 0 ? chunk : Buffer.concat([...held, chunk]);
    }
    if (!this.hold) return chunk;
    this.held.push(chunk);
    return null;
  }

  private keep(chunk: Uint8Array): void {
    if (this.over) return;
    if (this.kept + chunk.length > this.maxBytes) {
      // (the stream stops at the read that passes --max-event-bytes: nothing of the body is printed)
      this.over = true;
      this.parts = [];
      return;
    }
    this.parts.push(chunk.slice());
    this.kept += chunk.length;
  }

  /**
   * At the input's end: the events the whole answer is read as (`event`, `data`), or none when the
   * body is not one (the provider's error body, not JSON, too large, or not UTF-8 where decoding
   * is strict): the stream's own error then says why.
   */
  events(): { event?: string; data: string }[] {
    if (this.state !== 'body' || this.over) return [];
    const all = Buffer.concat(this.parts);
    if (jsonTooDeep(all) >= 0) return [];
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: this.fatal, ignoreBOM: true }).decode(all);
    } catch {
      return [];
    }
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      return [];
    }
    const events = describeFormat(this.format).wholeAnswerEvents(v, wholeAnswerBudget(this.maxBytes));
    return events === null || events === undefined ? [] : events.map((e) => ({ ...e }));
  }
}
