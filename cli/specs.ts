// What each command accepts: the parser and the help are made from these tables. No library
// import here, so that the tests read them as they are (the defaults of the limits are checked
// against the library's constants there).
import type { CommandSpec, OptionSpec } from './args.js';
import { exitTableText } from './errors.js';
import { FORMATS, completionOf } from './formats.js';

export const formatOption: OptionSpec = {
  name: 'format', kind: 'string', arg: 'FORMAT', choices: FORMATS, default: 'sniffed from the first bytes',
  help: "the stream's format",
};

/**
 * Which choice to follow. Its largest value is the largest the library's core reads a choice as
 * (a 32-bit signed integer: past it, a choice was taken for another, 2^32 for choice 0).
 */
export const choiceOption: OptionSpec = {
  name: 'choice', kind: 'int', arg: 'N', default: '0', max: 2 ** 31 - 1, help: 'which choice of an OpenAI stream to follow',
};

/** The largest limit of an event, a line or a message the library takes (one buffer of its core). */
export const MAX_LIMIT_BYTES = 512 * 1024 * 1024;

export const limitOptions: OptionSpec[] = [
  {
    name: 'max-event-bytes', kind: 'bytes', arg: 'BYTES', default: '16 MiB', max: MAX_LIMIT_BYTES,
    help: 'the most bytes one SSE event (openai, openai-responses, anthropic, gemini, sse), Bedrock message or JSON body may hold, up to 512 MiB',
  },
  {
    name: 'max-line-bytes', kind: 'bytes', arg: 'BYTES', default: '16 MiB', max: MAX_LIMIT_BYTES,
    help: 'the most bytes of one line (ollama, ddg, ndjson, lines), up to 512 MiB',
  },
  {
    name: 'max-text-bytes', kind: 'bytes', arg: 'BYTES', default: '256 MiB',
    help: 'the most UTF-8 bytes of text the stream may assemble',
  },
];

export const decodeSpec: CommandSpec = {
  name: 'decode',
  usage: 'seam-stream decode [options] [FILE|-]',
  summary:
    'Decodes a captured or live model stream (FILE, or standard input: curl -N … | seam-stream decode) and prints its text\n'
    + 'as it commits: whole graphemes in NFC, standard output flushed after each write. Messages go to standard error only,\n'
    + 'so `seam-stream decode … > out.txt` holds nothing but the text.',
  positionals: 1,
  options: [
    formatOption,
    { name: 'events', kind: 'flag', default: 'off', help: 'print one JSON object per event instead of the text (SSE {type,data,id}, an NDJSON value, a line as a JSON string; comments as {"comment":…})' },
    { name: 'parts', kind: 'flag', default: 'off', help: 'a model stream: also print its reasoning as it comes, each tool call as it ends (the provider\'s own too, and its result\'s size), each source it cites and each medium\'s type and size, on standard error (the text stays alone on standard output)' },
    { name: 'report', kind: 'flag', default: 'off', help: 'print the finish report to standard error at the end: counts, SHA-256, NFC, status, finish reason, usage' },
    { name: 'json', kind: 'flag', default: 'off', help: 'with --report, the report as one JSON object' },
    { name: 'save', kind: 'string', arg: 'FILE', default: 'none', help: 'write the text to FILE (atomically) at the end; interrupted or failed, the text committed so far, said to be partial' },
    { name: 'idle-timeout', kind: 'seconds', arg: 'SECONDS', default: 'none', help: 'stop (exit 7) when nothing but keep-alives and empty events has come for that long (text, reasoning and calls are progress)' },
    { name: 'status', kind: 'string', arg: 'WHEN', choices: ['auto', 'on', 'off'], default: 'auto (on when standard error is a terminal and standard output is not)', help: 'a status line on standard error: bytes, events, heartbeats, time since the last text' },
    { name: 'lenient', kind: 'flag', default: 'off', help: 'invalid UTF-8 becomes U+FFFD instead of an error' },
    { name: 'no-nfc', kind: 'flag', default: 'off', help: 'commit whole graphemes without normalizing them to NFC' },
    choiceOption,
    { name: 'allow-truncated', kind: 'flag', default: 'off', help: 'a stream without its completion is a warning (exit 0), not an error' },
    ...limitOptions,
    { name: 'sse', kind: 'flag', default: 'off', help: 'the same as --format sse --events' },
    { name: 'ndjson', kind: 'flag', default: 'off', help: 'the same as --format ndjson --events' },
    { name: 'lines', kind: 'flag', default: 'off', help: 'the same as --format lines --events' },
    { name: 'text', kind: 'flag', default: 'off', help: 'the same as --format text' },
  ],
  epilog: `formats and what completes them:\n${FORMATS.map((f) => `  ${f.padEnd(17)}${completionOf(f)}`).join('\n')}\n\n${exitTableText([0, 1, 2, 3, 4, 5, 6, 7, 130])}`,
};

export const checkSpec: CommandSpec = {
  name: 'check',
  usage: 'seam-stream check [options] [FILE|-]',
  summary:
    'Validates a captured stream without printing its text: invalid UTF-8 (every sequence, with its byte offset); SSE problems\n'
    + '(an unterminated event, a retry that is not all digits, unknown fields, events over --max-event-bytes); events or NDJSON\n'
    + 'lines that are not JSON; provider errors; text over --max-text-bytes; a missing completion. Counts events, bytes and\n'
    + 'graphemes. Exit 0 only when clean.',
  positionals: 1,
  options: [
    formatOption,
    { name: 'json', kind: 'flag', default: 'off', help: 'print the result as one JSON object' },
    choiceOption,
    { name: 'max-problems', kind: 'int', arg: 'N', default: '50', help: 'list at most N problems (all are counted)' },
    ...limitOptions,
  ],
  epilog: `${exitTableText([0, 1, 2, 3, 4, 5, 6, 8])}\n(with several problems: the code of the first one that would stop decode, else 8 for the tolerated ones)`,
};

export const benchSpec: CommandSpec = {
  name: 'bench',
  usage: 'seam-stream bench [options]',
  summary:
    'Runs the benchmarks (a source checkout after npm run build): every row times seam and the alternative a user would pick,\n'
    + 'interleaved round by round in one process, after checking that both give the same output. Progress on standard error;\n'
    + 'the table of medians and ratios on standard output at the end.',
  positionals: 0,
  options: [
    { name: 'quick', kind: 'flag', default: 'on', help: 'the quick mode: 3 rounds × 0.15 s per contender, SSE at 64 B and 1 KiB reads' },
    { name: 'full', kind: 'flag', default: 'off', help: 'the full mode: 9 rounds × 0.4 s per contender, SSE at 16 B, 64 B, 1 KiB and 16 KiB reads' },
    { name: 'rounds', kind: 'int', arg: 'N', default: '3 (quick), 9 (full)', min: 1, help: 'interleaved rounds per row' },
    { name: 'max-time', kind: 'seconds', arg: 'SECONDS', default: '0.15 (quick), 0.4 (full)', help: 'seconds each contender is sampled per round' },
    { name: 'only', kind: 'list', arg: 'LAYERS', choices: ['utf8', 'sse', 'text'], default: 'all', help: 'the layers to run, comma-separated' },
    { name: 'corpus', kind: 'list', arg: 'NAMES', default: 'all', help: 'rows whose corpus name starts with one of these (ascii, chinese, emoji, mixed, openai, anthropic, one, english)' },
    { name: 'chunk', kind: 'list', arg: 'SIZES', default: "every read size of the mode", help: 'rows read in these sizes (64,1KiB,16384); text rows (deltas, not reads) are kept' },
    { name: 'json', kind: 'string', arg: 'FILE', default: 'none', help: 'write the rows and the machine as JSON' },
    { name: 'svg', kind: 'string', arg: 'FILE', default: 'none', help: 'write a bar chart of the ratios (SVG)' },
    { name: 'write', kind: 'string', arg: 'FILE', default: 'none', help: 'rewrite the generated table section of a Markdown file (between its marker comments)' },
  ],
};

export const demoSpec: CommandSpec = {
  name: 'demo',
  usage: 'seam-stream demo [--json]',
  summary:
    'One multilingual model stream (OpenAI chat completions: Chinese, emoji ZWJ sequences, flags, combining accents and NFD\n'
    + 'text, CRLF, a BOM), cut at its nastiest byte positions, through three consumers side by side: a hand-written decoder,\n'
    + 'TextDecoder (stream: true) + eventsource-parser + JSON.parse, and seam. Then seam\'s finish report. Takes about a second.',
  positionals: 0,
  options: [{ name: 'json', kind: 'flag', default: 'off', help: 'print the counts as one JSON object instead' }],
};

export const COMMAND_SPECS: readonly CommandSpec[] = [decodeSpec, checkSpec, demoSpec, benchSpec];
