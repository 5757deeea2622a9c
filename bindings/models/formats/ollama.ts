// Ollama: NDJSON lines, text at `message.content` (chat) or `response` (generate), the last line
// `"done": true` with its reason and counts.
import { JK_NULL, JK_STRING, JK_TRUE } from '../../core/generated/abi.js';
import { compilePaths } from '../paths.js';
import { type FormatSpec, LENGTH, NULL, STOP, errorOfBody, noneOf, strings, template, text } from './describe.js';

const P = { content: 0, response: 1, done: 2, doneReason: 3, error: 4, thinking: 5, genThinking: 6 } as const;
/** The counts of the last line that are its usage. */
const USAGE = ['prompt_eval_count', 'eval_count', 'total_duration', 'load_duration', 'prompt_eval_duration', 'eval_duration'];

export const ollama: FormatSpec = {
  framing: 'lines',
  contentType: 'application/x-ndjson',
  doneMarker: false,
  completion: 'a line with "done": true',
  finishReasons: { stop: STOP, length: LENGTH },
  errorBody: errorOfBody,
  program: /* @__PURE__ */ compilePaths(['message.content', 'response', 'done', 'done_reason', 'error', 'message.thinking', 'thinking']),
  // a line that is not the last: text, and no error, thinking or reason
  template: /* @__PURE__ */ template([text, text, /* @__PURE__ */ noneOf(JK_TRUE), strings, { role: 'none', ignore: NULL }, strings, strings]),
  read(doc, sink) {
    const n = doc.n;
    let done = false;
    for (let j = 0; j < n; j++) {
      const p = doc.path(j);
      const k = doc.kind(j);
      if (p === P.error && k !== JK_NULL) {
        sink.onError(doc.string(j));
        return;
      }
      if (k === JK_STRING) {
        if (p === P.content || p === P.response) sink.onText(doc, j);
        else if (p === P.thinking || p === P.genThinking) sink.onReasoning(doc, j);
        else if (p === P.doneReason) sink.onFinishReason(doc.string(j));
      } else if (p === P.done && k === JK_TRUE) {
        done = true;
      }
    }
    if (done) {
      // the final line carries the counts: those fields, as JSON.parse gives them
      const all = doc.whole() as Record<string, unknown>;
      const usage: Record<string, unknown> = {};
      for (const f of USAGE) if (typeof all[f] === 'number') usage[f] = all[f];
      if (Object.keys(usage).length !== 0) sink.onUsage(usage);
      sink.onDone();
    }
  },
};
