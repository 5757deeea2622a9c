// The package root: re-exports only. One file per concept lives beside this one.

// Layer 1: bytes (UTF-8 in WebAssembly)
export { Utf8Decoder, Utf8Validator, type Utf8DecoderOptions } from './utf8.js';
export { Utf8DecodeError } from './errors.js';
export { wasmBackend, ready, SeamWasmError, type Backend, type SeamWasmErrorCode } from './wasm.js';
export { coreMemoryLimit, coreMemoryUsed, setCoreMemoryLimit } from './memory.js';

// Layer 2: frames (lines, NDJSON, Server-Sent Events)
export { LineDecoder, NdjsonDecoder, DEFAULT_MAX_LINE_BYTES, type LineDecoderOptions, type LinesUtf8DecodeError } from './lines.js';
export {
  SseParser, SseByteEvents, encodeSse, DEFAULT_MAX_EVENT_BYTES, type SseEvent, type SseParserOptions, type SseUtf8DecodeError,
} from './sse.js';
export {
  CoreMemoryError, DisposedError, LineLimitError, NdjsonParseError, ReentrantCallError, SseCallbackError, SseLimitError,
} from './errors.js';

// Layer 3: text (graphemes, NFC, finishing)
export { GraphemeCommitter, DEFAULT_MAX_PENDING_BYTES, type GraphemeCommitterOptions } from './grapheme.js';
export { NfcCommitter, type NfcCommitterOptions } from './nfc.js';
export { TextAssembler, DEFAULT_MAX_TEXT_BYTES, type TextAssemblerOptions, type FinalReport } from './assembler.js';
export { countText, type TextCounts } from './text.js';
export { convertOffset, type OffsetUnit } from './offsets.js';
export { TextRangeError, type TextRangeErrorCode } from './text-errors.js';

// Layer 4: model streams
export { ModelStream, type ModelFormat, type ModelReport, type ModelStatus, type ModelStreamOptions } from './model.js';
export { ModelStreamError, type ModelStreamErrorCode } from './errors.js';
export { SseRelay, type SseRelayOptions } from './relay.js';

// Streams
export {
  Utf8DecoderStream, LineDecoderStream, LineBatchDecoderStream, SseDecoderStream, SseBatchDecoderStream, readChunks,
} from './streams.js';

// A Worker that decodes off the page's thread (the Worker itself is seam-stream/worker)
export {
  streamInWorker, WorkerStreamError, type WorkerStream, type WorkerRequest, type WorkerPart, type WorkerReport,
  type SseWorkerReport, type WorkerErrorData,
} from './worker-client.js';
