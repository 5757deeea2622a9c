// What the command knows of each provider's stream: where the text is, what completes the
// stream, what an error looks like. Used by `check`, and by cli/model.ts until the library's
// ModelStream replaces it.

export const MODEL_FORMATS = ['openai', 'openai-responses', 'anthropic', 'ollama', 'ddg'] as const;
export const PLAIN_FORMATS = ['sse', 'ndjson', 'lines', 'text'] as const;
export const FORMATS = [...MODEL_FORMATS, ...PLAIN_FORMATS] as const;

export type ModelFormat = (typeof MODEL_FORMATS)[number];
export type PlainFormat = (typeof PLAIN_FORMATS)[number];
export type Format = ModelFormat | PlainFormat;

export function isModelFormat(f: string): f is ModelFormat {
  return (MODEL_FORMATS as readonly string[]).includes(f);
}

/** How a format's bytes are framed. */
export function framingOf(f: Format): 'sse' | 'lines' | 'ndjson' | 'text' {
  switch (f) {
    case 'openai':
    case 'openai-responses':
    case 'anthropic':
    case 'sse':
      return 'sse';
    case 'ollama':
    case 'ndjson':
      return 'ndjson';
    case 'ddg':
    case 'lines':
      return 'lines';
    default:
      return 'text';
  }
}

/** What completes a stream of each format, as messages name it. */
export const COMPLETION: Record<Format, string> = {
  openai: 'data: [DONE]',
  'openai-responses': 'a response.completed event',
  anthropic: 'a message_stop event',
  ollama: 'a line with "done": true',
  ddg: 'a [DONE] line',
  sse: 'the blank line that ends its last event',
  ndjson: 'none: it ends with the input',
  lines: 'none: it ends with the input',
  text: 'none: it ends with the input',
};

/** What one frame (an event, a line) means. */
export interface Reading {
  text?: string;
  done?: boolean;
  /** The provider's error message. */
  error?: string;
  heartbeat?: boolean;
  finishReason?: string;
  usage?: Record<string, unknown>;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** A provider's error object or string as one line: its message, then its type or code. */
export function errorMessage(err: unknown): string {
  if (typeof err === 'string') return err;
  if (isObj(err)) {
    const inner = isObj(err.error) ? err.error : err;
    const message = str(inner.message) ?? str(err.message) ?? (typeof inner.error === 'string' ? inner.error : undefined);
    const kind = str(inner.code) ?? str(inner.type) ?? (str(err.type) !== 'error' ? str(err.type) : undefined);
    const status = typeof err.status === 'number' ? `status ${err.status}` : undefined;
    if (message !== undefined) return kind && kind !== message ? `${message} (${kind})` : message;
    if (kind !== undefined) return status ? `${kind} (${status})` : kind;
  }
  return JSON.stringify(err);
}

/** A JSON body (not an event stream) that is a provider's error: OpenAI, Anthropic, Ollama, ddg. */
export function isErrorBody(v: unknown): boolean {
  return isObj(v) && ('error' in v || v.type === 'error' || v.action === 'error');
}

/**
 * The JSON text of a frame, or what the frame is without JSON: `done` ([DONE]), or `skip`
 * (nothing to read: a blank ddg line, a [DONE] where it completes nothing).
 */
export function frameJson(format: ModelFormat, data: string): { done: true } | { skip: true } | { json: string } {
  if (format === 'ddg') {
    let s = data;
    if (s.startsWith('data:')) s = s.slice(s.startsWith('data: ') ? 6 : 5);
    if (s.trim() === '') return { skip: true };
    if (s === '[DONE]') return { done: true };
    return { json: s };
  }
  if (format === 'ollama') return data.trim() === '' ? { skip: true } : { json: data };
  if (data === '[DONE]') return format === 'openai' ? { done: true } : { skip: true };
  return { json: data };
}

const OLLAMA_USAGE = ['prompt_eval_count', 'eval_count', 'total_duration', 'load_duration', 'prompt_eval_duration', 'eval_duration'];

/** What a parsed frame means, for each format. `type` is the SSE event type ('message' if none). */
export function interpret(format: ModelFormat, type: string, v: unknown, choice = 0): Reading {
  if (!isObj(v)) return {};
  switch (format) {
    case 'openai': {
      if (v.error !== undefined && v.error !== null) return { error: errorMessage(v.error) };
      if (type === 'error') return { error: errorMessage(v) };
      const r: Reading = {};
      const choices = Array.isArray(v.choices) ? v.choices : [];
      for (let k = 0; k < choices.length; k++) {
        const c: unknown = choices[k];
        if (!isObj(c)) continue;
        const index = typeof c.index === 'number' ? c.index : k;
        if (index !== choice) continue;
        const content = isObj(c.delta) ? str(c.delta.content) : undefined;
        if (content !== undefined) r.text = content;
        if (c.finish_reason !== undefined && c.finish_reason !== null) r.finishReason = String(c.finish_reason);
      }
      if (isObj(v.usage)) r.usage = v.usage;
      return r;
    }
    case 'openai-responses': {
      const t = str(v.type) ?? type;
      const response = isObj(v.response) ? v.response : undefined;
      switch (t) {
        case 'response.output_text.delta':
          return { text: str(v.delta) ?? '' };
        case 'response.completed':
          return { done: true, finishReason: str(response?.status) ?? 'completed', usage: isObj(response?.usage) ? response.usage : undefined };
        case 'response.incomplete': {
          const details = isObj(response?.incomplete_details) ? response.incomplete_details : undefined;
          return { done: true, finishReason: str(details?.reason) ?? 'incomplete', usage: isObj(response?.usage) ? response.usage : undefined };
        }
        case 'response.failed':
          return { error: errorMessage(response?.error ?? 'response.failed') };
        case 'error':
          return { error: errorMessage(v) };
      }
      return {};
    }
    case 'anthropic': {
      const t = str(v.type) ?? type;
      switch (t) {
        case 'content_block_delta': {
          const d = isObj(v.delta) ? v.delta : undefined;
          return d?.type === 'text_delta' ? { text: str(d.text) ?? '' } : {};
        }
        case 'message_start': {
          const m = isObj(v.message) ? v.message : undefined;
          return isObj(m?.usage) ? { usage: m.usage } : {};
        }
        case 'message_delta': {
          const d = isObj(v.delta) ? v.delta : undefined;
          const r: Reading = {};
          if (typeof d?.stop_reason === 'string') r.finishReason = d.stop_reason;
          if (isObj(v.usage)) r.usage = v.usage;
          return r;
        }
        case 'message_stop':
          return { done: true };
        case 'ping':
          return { heartbeat: true };
        case 'error':
          return { error: errorMessage(v.error ?? v) };
      }
      return {};
    }
    case 'ollama': {
      if (v.error !== undefined) return { error: errorMessage(v.error) };
      const r: Reading = {};
      const text = isObj(v.message) ? str(v.message.content) : str(v.response);
      if (text !== undefined) r.text = text;
      if (v.done === true) {
        r.done = true;
        if (typeof v.done_reason === 'string') r.finishReason = v.done_reason;
        const usage: Obj = {};
        for (const k of OLLAMA_USAGE) if (k in v) usage[k] = v[k];
        if (Object.keys(usage).length) r.usage = usage;
      }
      return r;
    }
    case 'ddg': {
      if (v.action === 'error' || v.error !== undefined) return { error: errorMessage(v.error ?? v) };
      const text = str(v.message) ?? str(v.content);
      return text !== undefined ? { text } : {};
    }
  }
}
