// Byte offsets of lines and SSE events, found in JavaScript beside the frame layer: the frame
// layer's events and lines carry no offsets, and the command names the byte where a bad event or
// line starts. Lines end as the frame layer ends them: LF, CRLF, or a lone CR (also when a CR and
// its LF arrive in different reads).

/** Bytes kept from the start of each line: enough for any SSE field name the command checks. */
export const HEAD_BYTES = 64;

export type LineFn = (start: number, head: Uint8Array, length: number, terminated: boolean) => void;

export class LineScanner {
  /** Bytes seen so far. */
  offset = 0;
  /** Lines ended so far (an unterminated last line counts at `end()`). */
  lines = 0;
  private lineStart = 0;
  private lineLen = 0;
  private readonly head = new Uint8Array(HEAD_BYTES);
  private headLen = 0;
  private afterCR = false;

  constructor(private readonly onLine: LineFn) {}

  push(chunk: Uint8Array): void {
    const n = chunk.length;
    let i = 0;
    if (this.afterCR && n > 0) {
      this.afterCR = false;
      if (chunk[0] === 10) {
        // the LF of a CRLF whose CR ended the previous read
        i = 1;
        this.lineStart = this.offset + 1;
      }
    }
    let nextLf = chunk.indexOf(10, i);
    let nextCr = chunk.indexOf(13, i);
    while (i < n) {
      if (nextLf !== -1 && nextLf < i) nextLf = chunk.indexOf(10, i);
      if (nextCr !== -1 && nextCr < i) nextCr = chunk.indexOf(13, i);
      const j = nextLf === -1 ? (nextCr === -1 ? n : nextCr) : nextCr === -1 ? nextLf : Math.min(nextLf, nextCr);
      if (this.headLen < HEAD_BYTES && j > i) {
        const take = Math.min(HEAD_BYTES - this.headLen, j - i);
        this.head.set(chunk.subarray(i, i + take), this.headLen);
        this.headLen += take;
      }
      this.lineLen += j - i;
      if (j === n) break;
      this.lines++;
      this.onLine(this.lineStart, this.head.subarray(0, this.headLen), this.lineLen, true);
      let next = j + 1;
      if (chunk[j] === 13) {
        if (next < n) {
          if (chunk[next] === 10) next++;
        } else this.afterCR = true;
      }
      i = next;
      this.lineStart = this.offset + next;
      this.lineLen = 0;
      this.headLen = 0;
    }
    this.offset += n;
  }

  /** End of input: reports an unterminated last line; returns whether there was one. */
  end(): boolean {
    if (this.lineLen === 0) return false;
    this.lines++;
    this.onLine(this.lineStart, this.head.subarray(0, this.headLen), this.lineLen, false);
    this.lineLen = 0;
    this.headLen = 0;
    return true;
  }
}

const ascii = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

export interface SseLine {
  start: number;
  length: number;
  /** '' for a comment line; the field name otherwise (cut at HEAD_BYTES). */
  field: string;
  /** The start of the value (one leading space removed), cut at HEAD_BYTES. */
  value: string;
  comment: boolean;
  /** The field name runs past the bytes kept. */
  longName: boolean;
}

/**
 * SSE blocks over a LineScanner: the start offset of every block that will dispatch an event (one
 * with a data line), in order, so that the n-th event the parser returns is matched to the n-th
 * start. `onLine` sees each non-blank line's field, for checks.
 */
export class SseBlocks {
  /** Start offsets of the blocks with data that have not been matched to an event yet. */
  readonly dataStarts: number[] = [];
  /** Where each of those blocks ended (its blank line), once it has. */
  readonly dataEnds: number[] = [];
  /** Start of the current block (its first non-blank line), or -1 between blocks. */
  blockStart = -1;
  private blockHasData = false;
  readonly scanner: LineScanner;

  constructor(private readonly onLine?: (line: SseLine) => void) {
    this.scanner = new LineScanner((start, head, length) => this.line(start, head, length));
  }

  push(chunk: Uint8Array): void {
    this.scanner.push(chunk);
  }

  /** End of input (an unterminated last line is part of the last block). */
  end(): void {
    this.scanner.end();
  }

  /** The offsets of the next dispatched event's block and of its end (the blank line). */
  nextEvent(): [number, number] {
    return [this.dataStarts.shift() ?? -1, this.dataEnds.shift() ?? -1];
  }

  private line(start: number, head: Uint8Array, length: number): void {
    if (length === 0) {
      if (this.blockHasData) this.dataEnds.push(start);
      this.blockStart = -1;
      this.blockHasData = false;
      return;
    }
    let h = head;
    if (start === 0 && h[0] === 0xef && h[1] === 0xbb && h[2] === 0xbf) h = h.subarray(3); // the stream's BOM
    if (h.length === 0 && length === 3 && start === 0) {
      // a line that is only the BOM is blank
      this.blockStart = -1;
      this.blockHasData = false;
      return;
    }
    const colon = h.indexOf(58);
    const comment = colon === 0;
    if (this.blockStart < 0 && !comment) this.blockStart = start; // (a comment is no part of an event: a keep-alive before it is not where it starts)
    const nameEnd = colon < 0 ? h.length : colon;
    const field = comment ? '' : ascii.decode(h.subarray(0, nameEnd));
    if (field === 'data' && !this.blockHasData) {
      this.blockHasData = true;
      this.dataStarts.push(this.blockStart);
    }
    if (this.onLine) {
      let v = colon < 0 ? h.length : colon + 1;
      if (h[v] === 32) v++;
      this.onLine({
        start, length, field, comment, value: colon < 0 ? '' : ascii.decode(h.subarray(v)),
        longName: colon < 0 && length - (head.length - h.length) > h.length, // (a BOM is no part of the name)
      });
    }
  }
}

/** Line start offsets, in order, for frame layers that return one string or value per line. */
export class LineStarts {
  readonly starts: number[] = [];
  readonly ends: number[] = [];
  readonly scanner = new LineScanner((start, _head, length) => {
    this.starts.push(start);
    this.ends.push(start + length);
  });
  /** The 1-based number of the next line to be matched. */
  line = 1;

  push(chunk: Uint8Array): void {
    this.scanner.push(chunk);
  }

  end(): void {
    this.scanner.end();
  }

  /** The offsets of the next line the frame layer returns and of its end (before its line end). */
  next(): [number, number] {
    this.line++;
    return [this.starts.shift() ?? -1, this.ends.shift() ?? -1];
  }
}

/**
 * Every invalid sequence of a UTF-8 stream, as the WHATWG decoder finds them (one error per
 * maximal subpart, at its first byte): the library's strict decoders stop at the first, and
 * `check` lists them all. Used only past the first error, which the library finds.
 */
export class Utf8Errors {
  private needed = 0;
  private seen = 0;
  private lower = 0x80;
  private upper = 0xbf;
  private seqStart = 0;

  constructor(private readonly onError: (offset: number, truncated: boolean) => void) {}

  push(bytes: Uint8Array, base: number): void {
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i];
      if (this.needed === 0) {
        if (b < 0x80) continue;
        this.seqStart = base + i;
        if (b >= 0xc2 && b <= 0xdf) this.needed = 1;
        else if (b >= 0xe0 && b <= 0xef) {
          if (b === 0xe0) this.lower = 0xa0;
          if (b === 0xed) this.upper = 0x9f;
          this.needed = 2;
        } else if (b >= 0xf0 && b <= 0xf4) {
          if (b === 0xf0) this.lower = 0x90;
          if (b === 0xf4) this.upper = 0x8f;
          this.needed = 3;
        } else this.onError(base + i, false);
        continue;
      }
      if (b < this.lower || b > this.upper) {
        this.reset();
        this.onError(this.seqStart, false);
        i--; // the byte starts over
        continue;
      }
      this.lower = 0x80;
      this.upper = 0xbf;
      if (++this.seen === this.needed) this.reset();
    }
  }

  end(): void {
    if (this.needed !== 0) {
      this.reset();
      this.onError(this.seqStart, true);
    }
  }

  private reset(): void {
    this.needed = this.seen = 0;
    this.lower = 0x80;
    this.upper = 0xbf;
  }
}
