// Layer 4: what a relay's client writers share: what they write through (the relay), what a
// writer is (the parts of the message as they come, then the completion, the end or an error),
// and the small JSON pieces they write. A writer per client format: relay-openai.ts (OpenAI Chat
// Completions), relay-anthropic.ts (Anthropic Messages).
import type { MessageOut } from './document.js';
import type { ModelStreamError } from './errors.js';
import type { FormatSpec, Usage } from './formats/describe.js';
import type { Call, Message } from './message.js';

/** What a writer writes through: the relay. */
export interface RelayTarget {
  /** Appends a text for the client, as UTF-8 (encoded into the relay's buffer: no bytes are made for it). */
  writeText(s: string): void;
  /** Appends the `len` bytes at `ptr` of the core's memory. */
  writeSpan(ptr: number, len: number): void;
  /** Appends a JSON value's `len` bytes at `ptr` of the core's memory on one line (its line breaks as spaces). */
  writeJsonSpan(ptr: number, len: number): void;
  /** The text of `len` bytes at `ptr` of the core's memory (a string's body: unescaped when `escaped`). */
  text(ptr: number, len: number, escaped: boolean): string;
  /** Counts events written for the client. */
  wrote(events: number): void;
  /** What the upstream said so far. */
  readonly message: Message | null;
  /** Characters (code points) of the text written so far: the client's content. */
  readonly textChars: number;
  /** The upstream's format. */
  readonly spec: FormatSpec;
  /** The upstream's choice the relay follows (OpenAI's `index`). */
  readonly choice: number;
  /** A text unique to the relay, for the ids it makes (a call the upstream sent without one). */
  readonly serial: string;
  /** The relay's `id` and `model` (JSON strings), and its `created` time. */
  readonly idJson: string;
  readonly modelJson: string;
  readonly created: number;
}

/** The bytes a client writer puts around a content span that the core writes itself (a quiet event's). */
export interface QuietText {
  readonly head: string;
  readonly end: string;
}

/**
 * What the core may write itself, per channel: the bytes around a span of the answer's text, of
 * reasoning, and of the current call's arguments; null where the channel's events must come
 * through the writer (a block to open first). A head and end both empty: the channel's spans are
 * left out (reasoning dropped). A writer returns the same object until one of them changes, then a
 * new one: the relay knows its heads are in the core by the object.
 */
export interface QuietHeads {
  readonly text: QuietText | null;
  readonly reasoning: QuietText | null;
  /** For the stream's last call (the one `quiet` was asked about). */
  readonly args: QuietText | null;
}

/** A head and end of nothing: the channel's spans are left out. */
export const DROPPED: QuietText = { head: '', end: '' };

/** A client's wire format: the message's parts as they come (MessageOut), then its end. */
export interface ClientWriter extends MessageOut {
  /** Answer text, from an event read in JS: `len` bytes of a string's body at `ptr`. */
  text(ptr: number, len: number): void;
  /** What the core may write itself now, with `last` the stream's last call (its arguments' head when they are the writer's to write now). */
  quiet(last: Call | null): QuietHeads;
  /** A keep-alive comment of the upstream's (counted by the core, not written by it). */
  keepAlive(): void;
  /** Whether the core writes the upstream's comments itself, as comments. */
  readonly comments: boolean;
  /** The upstream's completion arrived. */
  completed(): void;
  /** After the completion: what ends the client's stream. */
  end(): void;
  /** The stream failed: an error event in the client's shape, never a completion. */
  error(e: ModelStreamError): void;
  /** The gateway ended the stream (SseRelay.abort): an error event in the client's shape, its type in the client's words for `kind`. */
  aborted(reason: Aborted): void;
}

/** Why a gateway ends a relayed stream itself: {@link SseRelay.abort}'s argument. */
export interface RelayAbort {
  /** What the client reads. */
  message: string;
  /**
   * What went wrong, written as the error's type in the client's words: `'timeout'` (OpenAI's
   * `timeout`, Anthropic's `timeout_error`), `'overloaded'` (the gateway's limits or memory:
   * `overloaded`, `overloaded_error`), `'server'` (`server_error`, `api_error`).
   * @defaultValue 'server'
   */
  kind?: 'timeout' | 'overloaded' | 'server';
  /** The gateway's code for it (OpenAI's `code`: `ERR_CLIENT_TIMEOUT`, …); Anthropic's error events have none. */
  code?: string;
}

/** A {@link RelayAbort} checked, its defaults in place. */
export interface Aborted {
  readonly message: string;
  readonly kind: 'timeout' | 'overloaded' | 'server';
  readonly code: string | null;
}

/** The upstream's usage in one shape, or undefined when it sent none. */
export function usageOf(t: RelayTarget): Usage | undefined {
  const u = t.message?.usage;
  return u === undefined ? undefined : t.spec.usage(u);
}

/** A call's id for a client: the provider's, or one made for it (`prefix` + the relay's serial + its index) when it sent none. */
export function callId(t: RelayTarget, call: Call, prefix: string): string {
  return JSON.stringify(call.id !== '' ? call.id : `${prefix}${t.serial}_${call.index}`);
}

/** An error's type and message for a client: the provider's own, else what kind of failure it was. */
export function errorParts(e: ModelStreamError): { message: string; type: string } {
  return { message: e.providerMessage ?? e.message, type: e.code === 'ERR_PROVIDER' ? 'upstream_error' : 'upstream_stream_error' };
}

/**
 * A stream's error as OpenAI's clients read one (`{message, type, code, offset, provider_code?}`):
 * the relay's error event's `error`, and a whole answer's error body's (wholeError). `message`: the
 * error's words for it, unless said otherwise.
 */
export function openAiError(e: ModelStreamError, message = errorParts(e).message): Record<string, unknown> {
  const { type } = errorParts(e);
  // (the provider's own type or code for it, `throttlingException`, `RESOURCE_EXHAUSTED`, …, when it gave one)
  return e.providerCode === undefined ? { message, type, code: e.code, offset: e.offset }
    : { message, type, code: e.code, offset: e.offset, provider_code: e.providerCode };
}

/** The usage in OpenAI Chat's words (a relay's usage chunk, a whole answer's): its counts, and the cached and reasoning ones where known. */
export function openAiUsage(u: Usage): Record<string, unknown> {
  const input = u.input ?? 0;
  const output = u.output ?? 0;
  const o: Record<string, unknown> = { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
  if (u.cacheRead !== undefined) o.prompt_tokens_details = { cached_tokens: u.cacheRead };
  if (u.reasoning !== undefined) o.completion_tokens_details = { reasoning_tokens: u.reasoning };
  return o;
}

/** Input tokens in Anthropic's words: those neither read from the cache nor written to it (undefined when unknown). */
export function anthropicInput(u: Usage | undefined): number | undefined {
  return u?.input === undefined ? undefined : u.input - (u.cacheRead ?? 0) - (u.cacheWrite ?? 0);
}

/** The usage in Anthropic's words (a relay's `message_delta`'s, a whole answer's): the counts that are known. */
export function anthropicUsage(u: Usage): Record<string, unknown> {
  const o: Record<string, unknown> = { output_tokens: u.output ?? 0 };
  const input = anthropicInput(u);
  if (input !== undefined) o.input_tokens = input;
  if (u.cacheRead !== undefined) o.cache_read_input_tokens = u.cacheRead;
  if (u.cacheWrite !== undefined) o.cache_creation_input_tokens = u.cacheWrite;
  if (u.reasoning !== undefined) o.output_tokens_details = { thinking_tokens: u.reasoning };
  return o;
}
