// Layer 1 as a Web TransformStream: bytes in, strings out.
import { Transform, failed, owning, textOn } from '../core/transform.js';
import { Utf8Decoder, type Utf8DecoderOptions, asBytes } from './utf8.js';

/** Like `TextDecoderStream`: bytes in, strings out (one per read that completes text), strict by default. */
export class Utf8DecoderStream extends Transform<ArrayBufferLike | ArrayBufferView, string> {
  constructor(options?: Utf8DecoderOptions) {
    const decoder = new Utf8Decoder(options);
    super(owning({
      transform(chunk, controller) {
        let text: string;
        try { text = decoder.push(asBytes(chunk, 'Utf8DecoderStream')); } catch (err) { return failed(controller, err, textOn(err)); }
        if (text !== '') controller.enqueue(text);
      },
      flush(controller) {
        let text: string;
        try { text = decoder.flush(); } catch (err) { return failed(controller, err, textOn(err)); }
        if (text !== '') controller.enqueue(text);
      },
    }, () => decoder.dispose()));
  }
}
