// The package root: re-exports only. Each layer lives in a folder beside this one: core/ (the WebAssembly
// instance, the decoder lifecycle, options), bytes/, frames/, text/, models/, and worker/.

// Layer 1: bytes (UTF-8 in WebAssembly)
export { Utf8Decoder, Utf8Validator, type Utf8DecoderOptions } from './bytes/utf8.js';
export { Utf8DecodeError } from './bytes/errors.js';
export { wasmBackend, ready, setCoreModule, SeamWasmError, type Backend, type SeamWasmErrorCode } from './core/wasm.js';
export { coreMemoryLimit, coreMemoryUsed, setCoreMemoryLimit } from './core/memory.js';
export { chosenStringRoutes as stringRoutes, type StringRoutes } from './core/strings.js';

// Layer 2: frames (lines, NDJSON, Server-Sent Events)
export { LineDecoder, NdjsonDecoder, DEFAULT_MAX_LINE_BYTES, type LineDecoderOptions, type LinesUtf8DecodeError } from './frames/lines.js';
export { SseParser, SseByteEvents, encodeSse, DEFAULT_MAX_EVENT_BYTES, type SseParserOptions, type SseUtf8DecodeError } from './frames/sse.js';
export { type SseEvent } from './frames/types.js';
export { MAX_LIMIT_BYTES } from './frames/frame-stream.js';
export {
  EventStreamDecoder, EventStreamError, DEFAULT_MAX_MESSAGE_BYTES, type EventStreamMessage, type EventStreamHeader, type EventStreamErrorCode,
} from './frames/eventstream.js';
export { CoreMemoryError, DisposedError } from './core/errors.js';
export { LineLimitError, NdjsonParseError, ReentrantCallError, SseCallbackError, SseLimitError } from './frames/errors.js';

// Layer 3: text (graphemes, NFC, finishing)
export { GraphemeCommitter, DEFAULT_MAX_PENDING_BYTES, type GraphemeCommitterOptions } from './text/grapheme.js';
export { NfcCommitter, type NfcCommitterOptions } from './text/nfc.js';
export { TextAssembler, DEFAULT_MAX_TEXT_BYTES, type TextAssemblerOptions, type FinalReport } from './text/assembler.js';
export { countText, type TextCounts } from './text/counts.js';
export { convertOffset, type OffsetUnit } from './text/offsets.js';
export { TextRangeError, type TextRangeErrorCode } from './text/errors.js';

// Layer 4: model streams
export {
  ModelStream, DEFAULT_MAX_ARGUMENT_BYTES, DEFAULT_MAX_MEDIA_BYTES, DEFAULT_MAX_REASONING_BYTES, type ModelFormat, type ModelReport, type ModelStreamOptions, type ReasoningBlock, type ToolCall, type Media,
  type BuiltinCallType, type Citation, type CitedSpan, type Grounding,
} from './models/stream.js';
export { type ModelStatus } from './models/reader.js';
export { ModelStreamError, type ModelStreamErrorCode } from './models/errors.js';
export { SseRelay, type SseRelayOptions } from './models/relay.js';
export { openAiAnnotations, type OpenAiAnnotation } from './models/relay-openai.js';
export { wholeAnswer, wholeError, type WholeAnswer, type WholeAnswerOptions, type WholeError } from './models/whole-answer.js';
export { finishWithCalls, wholeAnswerBudget } from './models/formats/describe.js';
export { jsonTooDeep } from './models/document.js';
export { JSON_MAX_DEPTH } from './core/generated/abi.js';
export type { RelayAbort } from './models/writer.js';
export { ModelEventReader, type ModelEventReaderOptions, type ModelEventReading } from './models/events.js';
export { ModelEventStreamDecoder, type ModelEventStreamDecoderOptions, type ModelEventStreamMessage } from './models/unframe.js';
export {
  MODEL_FORMATS, describeFormat, type ClientFormat, type ModelFormatFacts, type ProviderError, type Usage, type WholeEvent,
} from './models/formats/index.js';

// Streams
export { Utf8DecoderStream } from './bytes/stream.js';
export { LineDecoderStream, LineBatchDecoderStream, SseDecoderStream, SseBatchDecoderStream } from './frames/streams.js';
export { SseRelayStream, ModelTextStream, ModelPartStream } from './models/streams.js';
export { ModelPartReader, type ModelPart } from './models/parts.js';
export { readChunks } from './core/transform.js';

// A Worker that decodes off the page's thread (the Worker itself is seam-stream/worker)
export {
  streamInWorker, WorkerStreamError, type WorkerStream, type WorkerRequest, type WorkerPart, type WorkerReport,
  type SseWorkerReport, type WorkerErrorData,
} from './worker/client.js';
