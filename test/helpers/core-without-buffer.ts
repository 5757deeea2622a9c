// Imported first by a test file: the realm's core is made while the global Buffer is hidden, so it
// takes the string routes of a runtime without one (the browsers', workerd's without nodejs_compat),
// as a page would: its strings from TextDecoder and the core, none from Buffer. The tests' own
// Buffer is there again once the core is made.
import { ModelStream } from '../../bindings/index.js';

const g = globalThis as { Buffer?: unknown };
const saved = g.Buffer;
g.Buffer = undefined;
try {
  new ModelStream({ format: 'openai' }).dispose(); // (the realm's core, made here)
} finally {
  g.Buffer = saved;
}
