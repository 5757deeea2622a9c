// The core's unit and property suites that import only the package's public names (index.js), so
// that they run against the built package on every runtime (the property suites with their seeds:
// SEAM_SEED replays, as under vitest). (test/unit/relay.test.ts is left out: it runs the official
// clients against a local HTTP server.)
import '../unit/utf8.test.js';
import '../unit/edges.test.js';
import '../unit/streams.test.js';
import '../property/utf8.test.js';
import '../property/frames.test.js';
import '../property/sse-limit.test.js';
import '../property/sse-encode.test.js';
import '../unit/routes-detected.test.js';
