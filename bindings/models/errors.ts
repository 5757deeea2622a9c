// Errors of layer 4: a model stream that is cut short, an error from the provider, a bad event.

/** What went wrong in a model stream. */
export type ModelStreamErrorCode =
  | 'ERR_STREAM_TRUNCATED' // the stream ended without its provider's completion
  | 'ERR_PROVIDER' // the provider's error event or error body
  | 'ERR_BAD_EVENT' // an event that is not valid JSON, or not an event of the format
  | 'ERR_EVENT_TOO_LARGE' // an event over maxEventBytes
  | 'ERR_ARGUMENTS_TOO_LARGE' // tool-call arguments over maxArgumentBytes
  | 'ERR_REASONING_TOO_LONG' // ModelStream: reasoning (and a refusal, and citations) kept over maxReasoningBytes; SseRelay: the sources cited it keeps until the completion
  | 'ERR_TEXT_TOO_LONG' // ModelStream: the answer's text over maxTextBytes
  | 'ERR_INVALID_UTF8' // invalid or truncated UTF-8
  | 'ERR_CRC_MISMATCH' // Bedrock: a message of AWS's event stream whose prelude or message CRC32 does not match
  | 'ERR_BAD_FRAME' // Bedrock: a message of AWS's event stream whose lengths cannot be, or with a bad header
  | 'ERR_BAD_ARGUMENTS'; // wholeAnswer(): a tool call whose arguments are not one JSON value, which no whole answer can carry

/**
 * A model stream's error, with the absolute byte offset in the stream and the text the call had
 * committed before it (nothing returned is lost). The stream stays failed until `reset()`.
 */
export class ModelStreamError extends Error {
  readonly code: ModelStreamErrorCode;
  /** Absolute byte offset in the stream: of the bad byte, the event, or the end (-1 for ERR_BAD_ARGUMENTS: the arguments as a whole). */
  readonly offset: number;
  /** The text this call had not returned before the error: what it committed, and what the text layer held back (no more text can follow). */
  readonly text: string;
  /** With ERR_PROVIDER: the provider's own message. */
  readonly providerMessage: string | undefined;
  /** With ERR_PROVIDER: the provider's type or code for it (`overloaded_error`, `rate_limit_exceeded`, …), when it gave one. */
  readonly providerCode: string | undefined;

  constructor(code: ModelStreamErrorCode, offset: number, message: string, text: string, providerMessage?: string, providerCode?: string) {
    super(message);
    this.name = 'ModelStreamError';
    this.code = code;
    this.offset = offset;
    this.text = text;
    this.providerMessage = providerMessage;
    this.providerCode = providerCode;
  }

  /** @internal The same error with `more` text after the text it carried. */
  withMoreText(more: string): ModelStreamError {
    return new ModelStreamError(this.code, this.offset, this.message, this.text + more, this.providerMessage, this.providerCode);
  }

  /** @internal The same error without the text it carried. */
  withoutOutput(): ModelStreamError {
    return new ModelStreamError(this.code, this.offset, this.message, '', this.providerMessage, this.providerCode);
  }
}

/** @internal What a relay's client reads of an upstream stream of `format` that ended without its completion (SseRelay's error event, wholeError's body). */
export const cutShort = (format: string): string => `The upstream ${format} stream ended without its completion: the answer is cut short`;
