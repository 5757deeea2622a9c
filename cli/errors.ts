// Exit codes and how an error becomes one line on stderr (never a stack trace).

export const EXIT = {
  OK: 0,
  /** A usage error (unknown option or command, bad value), or an input that cannot be read. */
  USAGE: 1,
  /** Invalid UTF-8 (strict decoding), at the byte offset the message names. */
  UTF8: 2,
  /** The stream ended without its completion ([DONE], message_stop, …), or the input was empty. */
  TRUNCATED: 3,
  /** A limit was reached (--max-event-bytes, --max-line-bytes, --max-text-bytes). */
  LIMIT: 4,
  /** The provider sent an error event or an error body. */
  PROVIDER: 5,
  /** An event or an NDJSON line is not valid JSON. */
  BAD_EVENT: 6,
  /** --idle-timeout: nothing but keep-alives and empty events for that long. */
  IDLE: 7,
  /** check: only problems that decoding tolerates (a bogus retry, unknown fields). */
  WARNINGS: 8,
  /** Interrupted (SIGINT, Ctrl+C). */
  INTERRUPTED: 130,
  /** Terminated (SIGTERM: `timeout`, a process manager, `kill`). */
  TERMINATED: 143,
} as const;

/** The table the help and docs/cli.md show. */
export const EXIT_TABLE = [
  [EXIT.OK, 'the stream was read to its completion (or standard output was closed by its reader)'],
  [EXIT.USAGE, 'a usage error, or the input cannot be read (no such file, a directory, no permission)'],
  [EXIT.UTF8, 'invalid UTF-8, at the byte offset named; the text before it was printed'],
  [EXIT.TRUNCATED, 'the stream ended without its completion, or the input was empty'],
  [EXIT.LIMIT, 'a limit was reached (--max-event-bytes, --max-line-bytes, --max-text-bytes)'],
  [EXIT.PROVIDER, "the provider sent an error (its message is printed)"],
  [EXIT.BAD_EVENT, 'an event or NDJSON line is not valid JSON, at the line or offset named'],
  [EXIT.IDLE, '--idle-timeout: nothing but keep-alives and empty events came for that long'],
  [EXIT.WARNINGS, 'check only: problems that decoding tolerates (a bogus retry, unknown fields, a tool call whose arguments are not JSON, most of what follows the completion)'],
  [EXIT.INTERRUPTED, 'interrupted (Ctrl+C)'],
  [EXIT.TERMINATED, 'terminated (SIGTERM: timeout, a process manager, kill), as Ctrl+C stops it'],
] as const;

export function exitTableText(codes: readonly number[] = EXIT_TABLE.map(([c]) => c)): string {
  return 'exit codes:\n' + EXIT_TABLE.filter(([c]) => codes.includes(c)).map(([c, what]) => `  ${String(c).padStart(3)}  ${what}`).join('\n');
}

/** A mistake in the command line. */
export class UsageError extends Error {
  readonly exitCode = EXIT.USAGE;
}

/** The input cannot be opened or read. */
export class InputError extends Error {
  readonly exitCode = EXIT.USAGE;
}

interface Coded {
  code?: unknown;
  message?: unknown;
}

/** The exit code for an error thrown while decoding. */
export function exitCodeOf(e: unknown): number {
  const code = (e as Coded | null)?.code;
  switch (code) {
    case 'ERR_INVALID_UTF8':
    case 'ERR_TRUNCATED_UTF8':
      return EXIT.UTF8;
    case 'ERR_STREAM_TRUNCATED':
      return EXIT.TRUNCATED;
    case 'ERR_LINE_TOO_LONG':
    case 'ERR_SSE_EVENT_TOO_LARGE':
    case 'ERR_EVENT_TOO_LARGE':
    case 'ERR_FRAME_TOO_LARGE':
    case 'ERR_TEXT_TOO_LONG':
    case 'ERR_ARGUMENTS_TOO_LARGE':
    case 'ERR_REASONING_TOO_LONG':
    case 'ERR_CORE_MEMORY':
      return EXIT.LIMIT;
    case 'ERR_PROVIDER':
      return EXIT.PROVIDER;
    case 'ERR_BAD_EVENT':
    case 'ERR_NDJSON_PARSE':
    case 'ERR_CRC_MISMATCH': // (AWS's event stream: a damaged message)
    case 'ERR_BAD_FRAME':
      return EXIT.BAD_EVENT;
  }
  if (e instanceof UsageError || e instanceof InputError) return e.exitCode;
  return EXIT.USAGE;
}

/** What a limit's option is called on the command line. */
const LIMIT_OPTION: Record<string, string> = {
  ERR_LINE_TOO_LONG: '--max-line-bytes',
  ERR_SSE_EVENT_TOO_LARGE: '--max-event-bytes',
  ERR_EVENT_TOO_LARGE: '--max-event-bytes',
  ERR_FRAME_TOO_LARGE: '--max-event-bytes',
  ERR_TEXT_TOO_LONG: '--max-text-bytes',
};

/** One line for stderr, without the program name. */
export function describeError(e: unknown): string {
  const code = (e as Coded | null)?.code;
  const message = String((e as Coded | null)?.message ?? e);
  // a model stream's line (ollama, ddg) is limited by --max-line-bytes
  // (the library names its option maxEventBytes, which the command gives --max-line-bytes: said in the
  // words a line format's limit has everywhere else, as check says it)
  if (code === 'ERR_EVENT_TOO_LARGE' && message.startsWith('Line ')) return `${message.replace('than maxEventBytes (', 'than maxLineBytes (')} (raise it with --max-line-bytes)`;
  if (typeof code === 'string' && code in LIMIT_OPTION) return `${message} (raise it with ${LIMIT_OPTION[code]})`;
  if (code === 'ERR_INVALID_UTF8' || code === 'ERR_TRUNCATED_UTF8' || code === 'ERR_NDJSON_PARSE' || code === 'ERR_CORE_MEMORY') return message;
  // (limits the command keeps at the library's defaults: 16 MiB of arguments, 64 MiB of reasoning)
  if (code === 'ERR_ARGUMENTS_TOO_LARGE' || code === 'ERR_REASONING_TOO_LONG') return message;
  if (code === 'ERR_PROVIDER' || code === 'ERR_BAD_EVENT' || code === 'ERR_STREAM_TRUNCATED' || code === 'ERR_CRC_MISMATCH' || code === 'ERR_BAD_FRAME') return message;
  if (e instanceof UsageError || e instanceof InputError) return message;
  return `internal error: ${message}`;
}
