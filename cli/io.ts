// Reading the input (a file or standard input, as it arrives), writing standard output (each
// write goes out at once; a reader that closes it ends the command quietly), and saving a file
// atomically.
import { accessSync, closeSync, constants, createReadStream, fstatSync, fsyncSync, openSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { InputError } from './errors.js';

export interface Input {
  /** The name messages use: the path, or 'standard input'. */
  name: string;
  chunks: AsyncIterable<Uint8Array>;
  /** Stops reading now. */
  close(): void;
}

function reason(e: unknown): string {
  const code = (e as { code?: string }).code;
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory';
    case 'ELOOP':
      return 'too many symbolic links';
    case 'ENOTDIR':
      return 'a part of the path is not a directory';
    default:
      return code ? `${code}: ${(e as Error).message}` : String((e as Error)?.message ?? e);
  }
}

/** Opens FILE, or standard input for '-' or no FILE; an unreadable path is an InputError. */
export function openInput(file: string | undefined): Input {
  if (file === undefined || file === '-') {
    const stdin = process.stdin;
    if (stdin.isTTY) process.stderr.write('seam-stream: reading standard input (end it with Ctrl+D)\n');
    return {
      name: 'standard input',
      chunks: stdin as AsyncIterable<Uint8Array>,
      close: () => {
        stdin.pause();
        stdin.destroy();
      },
    };
  }
  let fd: number;
  try {
    if (statSync(file).isDirectory()) throw new InputError(`cannot read ${file}: it is a directory`);
    fd = openSync(file, 'r');
    if (fstatSync(fd).isDirectory()) {
      closeSync(fd);
      throw new InputError(`cannot read ${file}: it is a directory`);
    }
  } catch (e) {
    if (e instanceof InputError) throw e;
    throw new InputError(`cannot read ${file}: ${reason(e)}`);
  }
  const stream = createReadStream('', { fd, highWaterMark: 64 * 1024 });
  const chunks = (async function* () {
    try {
      for await (const c of stream) yield c as Uint8Array;
    } catch (e) {
      throw new InputError(`cannot read ${file}: ${reason(e)}`);
    }
  })();
  return { name: file, chunks, close: () => stream.destroy() };
}

/** Standard output: each write goes out now; after its reader closed it, `closed` is set. */
export class Output {
  closed = false;
  private onClose: (() => void) | undefined;

  constructor() {
    process.stdout.on('error', (e: NodeJS.ErrnoException) => {
      if (this.closed) return;
      this.closed = true;
      if (e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED') this.onClose?.();
      else {
        process.stderr.write(`seam-stream: cannot write standard output: ${e.message}\n`);
        process.exit(1);
      }
    });
  }

  /** What to do when the reader of standard output goes away. */
  whenClosed(f: () => void): void {
    this.onClose = f;
  }

  write(s: string): void {
    if (s === '' || this.closed) return;
    process.stdout.write(s);
  }

  /** Resolves when what was written has gone out (at once for files, pipes and terminals on Linux; a socket may lag). */
  drained(): Promise<void> | undefined {
    if (this.closed || !process.stdout.writableNeedDrain) return undefined;
    return new Promise((resolve) => {
      const done = () => {
        process.stdout.off('drain', done);
        process.stdout.off('close', done);
        resolve();
      };
      process.stdout.on('drain', done);
      process.stdout.on('close', done);
    });
  }
}

/**
 * Whether `file` can be saved to (its folder exists and can be written, and it is not a folder),
 * before a stream is read into it: an InputError otherwise.
 */
export function checkSavable(file: string): void {
  try {
    if (statSync(file, { throwIfNoEntry: false })?.isDirectory()) throw Object.assign(new Error(), { code: 'EISDIR' });
    const dir = dirname(file);
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error(), { code: 'ENOTDIR' });
    accessSync(dir, constants.W_OK);
  } catch (e) {
    throw new InputError(`cannot save ${file}: ${reason(e)}`);
  }
}

/** Writes `text` to `file` atomically: a temporary file beside it, synced, then renamed into place. */
export function saveAtomically(file: string, text: string): void {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  let fd: number | undefined;
  try {
    fd = openSync(tmp, 'w', 0o644);
    const bytes = Buffer.from(text, 'utf8');
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, file);
  } catch (e) {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      /* it was not made */
    }
    throw new InputError(`cannot save ${file}: ${reason(e)}`);
  }
}

/** Flushes standard output and standard error, then exits with `code`. */
export function exitWith(code: number): never {
  process.exitCode = code;
  // Standard output and error are synchronous on Linux for files, pipes and terminals; where they
  // are not, the pending writes are let out first.
  const pending = (s: NodeJS.WriteStream) => !s.destroyed && s.writableLength > 0;
  if (pending(process.stdout) || pending(process.stderr)) {
    // a socket (not a pipe or a file) may still hold writes: they go out first, however long the
    // reader takes; a reader that goes away ends it with an error, and then the exit
    const done = () => process.exit(code);
    let n = 0;
    const one = () => (++n === 2 ? done() : undefined);
    for (const s of [process.stdout, process.stderr]) {
      if (!pending(s)) one();
      else {
        s.once('drain', one);
        s.once('error', one);
        s.once('close', one);
      }
    }
    // the callers do nothing more after this (decode has ended, check has printed)
    return undefined as never;
  }
  process.exit(code);
}
