// The streams' suites again, with seam's own two sides in front of each TransformStream: the route
// taken where the runtime does not call a transformer's cancel (Chromium 156, Firefox 153 ESR; the
// browser tests take it for real). A client that leaves, an upstream that errors, a decoder's error
// and a stream's end must give exactly what the runtime's own route gives, and the memory back.
import '../helpers/no-transformer-cancel.js';
import '../unit/stream-ownership.test.js';
import '../unit/model-streams.test.js';
import '../unit/streams.test.js';

import { expect, it } from 'vitest';
import { ModelTextStream, SseDecoderStream, SseRelayStream, Utf8DecoderStream } from '../../bindings/index.js';

it('the streams here take seam\'s own sides: readable and writable are each stream\'s own properties, not the TransformStream\'s', async () => {
  const streams = [new Utf8DecoderStream(), new SseDecoderStream(), new SseRelayStream({ from: 'openai' }), new ModelTextStream({ format: 'openai' })];
  expect(streams.map((s) => [s instanceof TransformStream, Object.hasOwn(s, 'readable'), Object.hasOwn(s, 'writable')])).toEqual(streams.map(() => [true, true, true]));
  for (const s of streams) await s.readable.cancel();
});
