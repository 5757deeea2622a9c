// The package root: re-exports only. One file per concept lives beside this one.

// Layer 1: bytes (UTF-8 in WebAssembly)
export { Utf8Decoder, Utf8Validator, Utf8DecoderStream, type Utf8DecoderOptions } from './utf8.js';
export { Utf8DecodeError } from './errors.js';
export { wasmBackend, type Backend } from './wasm.js';

// Layer 2: frames (lines, NDJSON, Server-Sent Events)

// Layer 3: text (graphemes, NFC, finishing)

// Streams
