// The model fixtures and the model layer's suites that use the public names only (loaded by
// suites.ts).
import '../unit/model-fixtures.test.js';
import '../unit/model.test.js';
import '../unit/model-basics.test.js';
import '../unit/model-gemini.test.js';
import '../unit/relay-basics.test.js';
import '../property/model-calls.test.js';
import '../property/model-quiet.test.js';
import '../property/model-shape.test.js';
import '../property/model-damage.test.js';
import '../property/model-events.test.js';
import '../unit/bedrock-invoke.test.js';
import '../unit/bedrock-events.test.js';
import '../unit/model-streams.test.js';
import '../unit/stream-ownership.test.js';
import '../unit/relay-abort.test.js';
import '../unit/model-text-hash.test.js';
