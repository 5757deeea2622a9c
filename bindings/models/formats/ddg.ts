// ddg: lines `data: {json}` with the text in `message` or `content`, ended by a bare `[DONE]` line
// (or `data: [DONE]`); an error is `{"action": "error", "type", "status"}` or `{"error": …}`.
import { JK_NULL, JK_STRING } from '../../core/generated/abi.js';
import { compilePaths } from '../paths.js';
import { type FormatSpec, NULL, type ProviderError, ascii, errorMessage, errorOfBody, find, ignored, notLiteral, template, text } from './describe.js';

const P = { message: 0, content: 1, error: 2, errorMessage: 3, action: 4, type: 5, status: 6 } as const;
const ERROR = /* @__PURE__ */ ascii('error');

export const ddg: FormatSpec = {
  framing: 'lines',
  contentType: 'text/event-stream',
  stripData: true,
  doneMarker: true,
  completion: 'a [DONE] line',
  finishReasons: {},
  errorBody(body: unknown): ProviderError | undefined {
    const b = body as { action?: unknown; type?: unknown; status?: unknown } | null;
    if (typeof b === 'object' && b !== null && b.action === 'error') {
      const e: ProviderError = { message: typeof b.type === 'string' ? b.type : 'error' };
      if (b.status !== undefined) e.detail = `status ${String(b.status)}`;
      return e;
    }
    return errorOfBody(body);
  },
  program: /* @__PURE__ */ compilePaths(['message', 'content', 'error', 'error.message', 'action', 'type', 'status']),
  template: /* @__PURE__ */ template([text, text, { role: 'none', ignore: NULL }, ignored, /* @__PURE__ */ notLiteral('error'), ignored, ignored]),
  read(doc, sink) {
    const n = doc.n;
    const e = find(doc, P.error);
    if (e >= 0 && doc.kind(e) !== JK_NULL) {
      sink.onError(errorMessage(doc, e, find(doc, P.errorMessage)));
      return;
    }
    // `"action": "error"` (with the error's `type` and `status`): the line is an error, not text
    const action = find(doc, P.action);
    if (action >= 0 && doc.is(action, ERROR)) {
      const type = find(doc, P.type);
      const status = find(doc, P.status);
      sink.onError(type >= 0 ? doc.string(type) : 'error', status >= 0 ? `status ${doc.string(status)}` : undefined);
      return;
    }
    for (let j = 0; j < n; j++) {
      const p = doc.path(j);
      if ((p === P.message || p === P.content) && doc.kind(j) === JK_STRING) sink.onText(doc, j);
    }
  },
};
