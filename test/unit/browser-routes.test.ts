// The model layer's suites and the core's public suites (those the portable runner takes to every
// runtime) again on Node, through a core made without Buffer: the string routes Chromium, Firefox
// and workerd without nodejs_compat take (a kept text's lone surrogate once became U+FFFD there
// and nowhere else). routes-detected is left out: it names Node's own routes; so is relay-basics,
// whose reads larger than the input window come back as the read itself only where the core
// compares memory through a Buffer (without one they come back as a copy of the same bytes).
import '../helpers/core-without-buffer.js';
import { expect, it } from 'vitest';
import { stringRoutes } from '../../bindings/index.js';
import '../unit/model-fixtures.test.js';
import '../unit/model.test.js';
import '../unit/model-basics.test.js';
import '../unit/model-gemini.test.js';
import '../property/model-calls.test.js';
import '../property/model-quiet.test.js';
import '../property/model-shape.test.js';
import '../unit/bedrock-invoke.test.js';
import '../unit/bedrock-events.test.js';
import '../unit/model-streams.test.js';
import '../unit/relay-abort.test.js';
import '../unit/utf8.test.js';
import '../unit/edges.test.js';
import '../unit/streams.test.js';
import '../property/utf8.test.js';
import '../property/frames.test.js';
import '../property/sse-limit.test.js';
import '../property/sse-encode.test.js';

it('the core here takes the routes of a runtime without Buffer', () => {
  const r = stringRoutes();
  expect([r.frames, r.utf8ShortAscii]).toEqual(['textdecoder', 'js']);
});
