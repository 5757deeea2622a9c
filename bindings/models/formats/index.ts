// The formats a model stream can be read in: one description per provider (its own file beside
// this one), the only place its facts are written. The library reads streams with them, and the
// command and the gateway take what they need of them from here (through the package's exports).
import { anthropic } from './anthropic.js';
import { bedrock, bedrockInvoke } from './bedrock.js';
import { ddg } from './ddg.js';
import { gemini } from './gemini.js';
import { type FormatSpec, type ProviderError, type Usage, type WholeEvent, anthropicErrorType, finishIn, finishWords, wholeEventsWithin } from './describe.js';
import { ollama } from './ollama.js';
import { openai } from './openai.js';
import { openaiResponses } from './openai-responses.js';

export type { ProviderError, Usage, WholeEvent } from './describe.js';

/** The formats a model stream can be read in. */
export type ModelFormat = 'openai' | 'openai-responses' | 'anthropic' | 'ollama' | 'ddg' | 'gemini' | 'bedrock' | 'bedrock-invoke';

export const FORMATS: Readonly<Record<ModelFormat, FormatSpec>> = {
  openai, 'openai-responses': openaiResponses, anthropic, ollama, ddg, gemini, bedrock, 'bedrock-invoke': bedrockInvoke,
};

/** Every format, in the order the messages list them. */
export const MODEL_FORMATS: readonly ModelFormat[] = /* @__PURE__ */ Object.freeze(/* @__PURE__ */ Object.keys(FORMATS) as ModelFormat[]);

/** The wire formats a relay writes for its client. */
export type ClientFormat = 'openai' | 'anthropic';

/** What seam knows of a format, for code around a stream (a gateway, a command): {@link describeFormat}. */
export interface ModelFormatFacts {
  readonly format: ModelFormat;
  /** How its stream is framed: Server-Sent Events, NDJSON (a JSON value per line), other lines (ddg's `data:` lines), or AWS's binary event stream (Bedrock). */
  readonly framing: 'sse' | 'ndjson' | 'lines' | 'eventstream';
  /** The media type its stream comes as. */
  readonly contentType: string;
  /** What completes its stream, in words (`data: [DONE]`, `a message_stop event`, …). */
  readonly completion: string;
  /**
   * Whether its stream goes on after its completion with what is still read (Bedrock's `metadata`
   * event, the usage, after `messageStop`): such a stream is read to its end. Otherwise nothing
   * after the completion is read (a connection kept open after `[DONE]` need not be waited on).
   */
  readonly trailer: boolean;
  /**
   * Its provider may answer a JSON array in place of its stream (Gemini's streamGenerateContent
   * without alt=sse, an error among them): a stream that begins with `[` is one JSON body.
   */
  readonly arrayBody: boolean;
  /** For such a format, what asks for that array and how to ask for the stream instead (Gemini's: alt=sse); else undefined. */
  readonly arrayBodyNote: string | undefined;
  /**
   * One of its finish reasons in the words of a client's format (a reason it does not list comes
   * back as it is); `refused` (a stream's `refused`: the provider refused the prompt) gives the
   * client's word for a filter's or a refusal's stop, whatever the reason.
   */
  finishReason(reason: string, to: ClientFormat, refused?: boolean): string;
  /**
   * What the finish reason means when it says the model's turn failed (Gemini's
   * `MALFORMED_FUNCTION_CALL`, Bedrock's `malformed_tool_use`, …: a stream reads it as the
   * provider's error, `ERR_PROVIDER` with the reason as its code), else undefined.
   */
  failedTurn(reason: string): string | undefined;
  /** Its errors' types (a `ModelStreamError`'s `providerCode`) in Anthropic's words: `rate_limit_error`, `overloaded_error`, …, else `api_error`. */
  anthropicErrorType(providerCode: string | undefined): string;
  /** The provider's error in a JSON body (an HTTP error answer), or undefined when the body holds none. */
  errorOfBody(body: unknown): ProviderError | undefined;
  /** Its usage object (ModelStream's `usage`, as the provider sent it) as token counts in one shape. */
  usage(usage: Record<string, unknown>): Usage;
  /**
   * Its whole answer (a JSON body asked without streaming: OpenAI's `chat.completion`, Anthropic's
   * `message`, a Responses `response`, Gemini's GenerateContentResponse or a JSON array of them,
   * Bedrock's Converse answer, and for `bedrock-invoke` Claude's `message`) as the events of the
   * stream the same answer comes as, each with its `event:` name where the format names them, and
   * its data (Bedrock's: ConverseStream's payload under its event's name, `{"messageStop": {…}}`,
   * as ModelEventReader reads it); undefined for any other value (an error body), and for a
   * format without one here (Ollama's answer is one line of its stream already; ddg).
   * A model stream and a relay read a whole answer so, at `flush()`. With `maxBytes`: null when
   * the events' data would pass it (a stream's limit is 4 × maxEventBytes and 1 MiB), before they
   * are written whole (a long member said again in each of many choices' chunks).
   */
  wholeAnswerEvents(body: unknown): readonly WholeEvent[] | undefined;
  wholeAnswerEvents(body: unknown, maxBytes: number): readonly WholeEvent[] | undefined | null;
  /**
   * Whether a JSON value is its whole answer (the value {@link wholeAnswerEvents} reads: OpenAI's
   * `chat.completion`, Anthropic's `message`, …), without writing its events; false for a format
   * without one here.
   */
  isWholeAnswer(body: unknown): boolean;
  /**
   * Whether JSON text begins as its whole answer does (its first keys, in the order the provider
   * writes them: `{"id": …, "object": "chat.completion"`, `{"candidates":`, …), for a body too
   * long to parse whole; false for a format without one here.
   */
  beginsWholeAnswer(head: string): boolean;
}

const facts = new Map<ModelFormat, ModelFormatFacts>();

/** What seam knows of a format: its framing, media type, completion and what follows it, finish reasons and error bodies. */
export function describeFormat(format: ModelFormat): ModelFormatFacts {
  // (one of the formats' own names, not a name every object has: constructor, toString, __proto__)
  const spec = Object.hasOwn(FORMATS, format) ? FORMATS[format] : undefined;
  if (spec === undefined) throw new TypeError(`describeFormat: format must be one of ${MODEL_FORMATS.join(', ')}, got ${String(format)}`);
  let f = facts.get(format);
  if (f === undefined) {
    f = Object.freeze({
      format,
      framing: spec.framing === 'sse' || spec.framing === 'eventstream' ? spec.framing : spec.stripData ? 'lines' : 'ndjson',
      contentType: spec.contentType,
      completion: spec.completion,
      trailer: spec.trailer !== undefined,
      arrayBody: spec.arrayBody !== undefined,
      arrayBodyNote: spec.arrayBody,
      finishReason: (reason: string, to: ClientFormat, refused = false) => finishIn(spec, reason, to, refused),
      failedTurn: (reason: string) => finishWords(spec.finishReasons, reason)?.failed,
      anthropicErrorType: (code: string | undefined) => anthropicErrorType(spec, code),
      errorOfBody: (body: unknown) => spec.errorBody(body),
      usage: (usage: Record<string, unknown>) => spec.usage(usage),
      wholeAnswerEvents: ((body: unknown, maxBytes: number = Infinity) => wholeEventsWithin(spec, body, maxBytes)) as ModelFormatFacts['wholeAnswerEvents'],
      isWholeAnswer: (body: unknown) => spec.isWholeAnswer?.(body) ?? false,
      beginsWholeAnswer: (head: string) => spec.wholeAnswerHead?.test(head) ?? false,
    });
    facts.set(format, f);
  }
  return f;
}
