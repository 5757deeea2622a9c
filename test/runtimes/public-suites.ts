// The core's unit and property suites that import only the package's public names (index.js), so
// that they run against the built package on every runtime (the property suites with their seeds:
// SEAM_SEED replays, as under vitest).
import '../unit/utf8.test.js';
import '../unit/edges.test.js';
import '../unit/streams.test.js';
import '../unit/model.test.js';
import '../unit/model-basics.test.js';
import '../unit/relay.test.js';
import '../unit/relay-basics.test.js';
import '../property/utf8.test.js';
import '../property/frames.test.js';
import '../property/sse-encode.test.js';
import '../property/model-calls.test.js';
import '../property/model-quiet.test.js';
import '../property/model-shape.test.js';
