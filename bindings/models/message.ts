// Layer 4: the whole message a stream says besides its text: the finish reason and usage, its
// completion or error, reasoning (in blocks, with the signatures a caller must send back), and
// tool calls, the client's and the provider's own, as their fragments arrive. A format's
// description reports them (formats/describe.ts, Sink) and a reader keeps them here.

/** A tool call, as a stream has it so far. */
export interface ToolCall {
  /** 0, 1, … in the order the calls began (not the provider's block or output index). */
  index: number;
  /** The provider's id for the call (OpenAI's `id`, Anthropic's `tool_use` id, Responses' `call_id`); '' when it sent none. */
  id: string;
  name: string;
  /**
   * The arguments as JSON text: the fragments joined as sent (OpenAI, Anthropic, Responses), or
   * the arguments object's JSON (Ollama). Anthropic's call whose fragments are all empty has the
   * `input` of its start (`{}`).
   */
  arguments: string;
  /** The provider ended the call (its block's stop, its item's done, the finish, a whole call). */
  done: boolean;
  /** Once done: whether `arguments` is one complete JSON value (checked in the core). */
  valid?: boolean;
  /**
   * What the caller sends back with the call: Gemini's `thoughtSignature` of the part that carried
   * it, or from Google's OpenAI-compatible API the call's `extra_content.google.thought_signature`
   * (Gemini 3 refuses a history whose calls lack theirs).
   */
  signature?: string;
  /**
   * `'custom'`: a call of a custom tool (OpenAI's freeform tools: Chat's `custom` calls, Responses'
   * `custom_tool_call` items), whose `arguments` are its input as the model wrote it, free text
   * rather than JSON, with no `valid`. Otherwise the item type of a tool the API defines and the
   * client runs (Responses' `computer_call`, `local_shell_call`, `shell_call`, `apply_patch_call`,
   * `tool_search_call` run by the client, and an MCP server's `mcp_approval_request`), which names
   * the item the client sends back (`computer_call_output`, …, `mcp_approval_response`): its `name`
   * is the tool's (`computer`, `local_shell`, `shell`, `apply_patch`, `tool_search`, the MCP tool's
   * name) and its `arguments` are the item's members but `type`, `id`, `call_id`, `status` and
   * `created_by`, as sent (`{"action":…}`, `{"operation":…}`, …): the call is said whole by the
   * item's end. Absent for a function's call.
   */
  type?: BuiltinCallType | 'custom';
  /**
   * A call of the provider's own tool (in `serverToolCalls`): the tool's result as the provider
   * sent it, JSON text, once it came: Anthropic's result block (`{"type":"web_search_tool_result",
   * "tool_use_id":…,"content":…}`, which the client sends back with the call), Gemini's
   * `codeExecutionResult` object (`{"outcome":…,"output":…}`). Absent before, and for the calls
   * whose results a format does not read (Responses' hosted tools, Bedrock's).
   */
  result?: string;
}

/** The item types of the tools the API defines and the client runs (see {@link ToolCall.type}). */
export type BuiltinCallType = 'computer_call' | 'local_shell_call' | 'shell_call' | 'apply_patch_call' | 'tool_search_call' | 'mcp_approval_request';

/** A source the answer cites, as the provider said it. */
export interface Citation {
  /** The cited web page's address, when the source is one. */
  url?: string;
  /** The source's title (a page's, a document's, a file's name), when the provider gives one. */
  title?: string;
  /** The passage of the source that is cited, when the provider quotes it (Anthropic's `cited_text`). */
  citedText?: string;
  /**
   * The provider's citation as it sent it, with where it points: Anthropic's `citation`
   * (`web_search_result_location`, `char_location`, `page_location`, …), Responses' `annotation`
   * (`url_citation` with its `start_index` and `end_index` in its output text, `file_citation`, …),
   * OpenAI's annotation (`{type: "url_citation", url_citation: …}`), Gemini's grounding chunk
   * (`{web: {uri, title}}`, …) or citation source, Bedrock's citation.
   */
  source: Record<string, unknown>;
  /**
   * The spans of the answer's text the source backs, where the provider places them (Gemini's
   * `groundingSupports`), in order: offsets in UTF-16 code units of the stream's text (what
   * `push()` returned, joined: `text.slice(start, end)`). Placed when the answer's text is whole
   * (at the completion; a stream cut short, at its end); absent before, and where the provider
   * places none.
   */
  spans?: CitedSpan[];
}

/** A span of the answer's text that a source backs (see {@link Citation.spans}). */
export interface CitedSpan {
  /** UTF-16 code units of the stream's text before the span. */
  start: number;
  /** UTF-16 code units of the stream's text before the span's end (exclusive). */
  end: number;
  /** The provider's confidence that the source backs the span (Gemini's `confidenceScores`, 0 to 1), when it gives one. */
  confidence?: number;
}

/**
 * What a provider says of the searches behind a grounded answer, besides its sources: Gemini's
 * `groundingMetadata` (Grounding with Google Search) and `urlContextMetadata` (the URL context
 * tool). The last that came: Gemini says its metadata whole again in a later chunk.
 */
export interface Grounding {
  /** The queries the provider searched the web with (`webSearchQueries`), in order ([] when it said none). */
  queries: string[];
  /**
   * The Search Suggestions to show with the answer (`searchEntryPoint.renderedContent`): HTML and
   * CSS, as sent, which Google's terms for Grounding with Google Search require an app to display.
   */
  searchSuggestions?: string;
  /** The pages the URL context tool retrieved (`urlContextMetadata.urlMetadata`): each address and its status (`URL_RETRIEVAL_STATUS_SUCCESS`, …), as sent. */
  urls?: { url: string; status: string }[];
}

/** A span a source backs (in a stream, not for callers), in bytes of the answer's UTF-8 as the provider counts them, until the text is whole (see Message.placeSpans). */
export interface ByteSpan {
  citation: Citation;
  start: number;
  end: number;
  /** The text the provider says is there (Gemini's `segment.text`), when it says it. */
  text?: string;
  confidence?: number;
}

/**
 * Media the model returned in its answer, as sent: Gemini's `inlineData` parts (an image it made,
 * audio; `fileData` parts, at an address), Responses' generated images, OpenAI Chat's audio chunks
 * (`delta.audio.data`, one a chunk, as Gemini's audio parts are), OpenRouter's images (`delta.images`' URLs). Kept within `maxMediaBytes`; a part past it is kept without its data (`omitted`), so that
 * none is lost silently and the text's stream goes on.
 */
export interface Media {
  /**
   * The media type (`image/png`, `audio/L16;rate=24000`, …), as sent ('' without one); a `data:`
   * URL's, or where the stream says none, the format's: Responses' image's from its `output_format`,
   * OpenAI Chat's audio chunks `audio/pcm16;rate=24000` (raw 16-bit little-endian mono samples at 24 kHz, the
   * one format a streamed request may ask for), a whole answer's audio file's from its head (`audio/wav`,
   * `audio/mpeg`, `audio/flac`, `audio/ogg`, `audio/aac`, else raw pcm16's).
   */
  mimeType: string;
  /** The bytes, base64 as sent ('' when `omitted`, or for media at an address: `uri`). */
  data: string;
  /** Bytes of `data` as sent (the base64 text's), or of `uri`: what `maxMediaBytes` counts. */
  bytes: number;
  /**
   * The media's address, where the provider gives one in place of its data (Gemini's `fileData`
   * parts' `fileUri`, an OpenRouter image's URL that is not a `data:` URL); `data` is then ''.
   */
  uri?: string;
  /** The part was one of the model's thoughts (Gemini's interim images: `thought: true`). */
  thought?: true;
  /** Gemini's `thoughtSignature` of the part, which the caller sends back with it. */
  signature?: string;
  /** The data would have passed `maxMediaBytes`: not kept. */
  omitted?: true;
  /**
   * The provider's id of the media (OpenAI Chat's `audio.id`: a later turn sends the answer's audio
   * back as the assistant message's `audio: { id }`, while the provider keeps it), on each chunk of
   * a streamed answer's audio and on a whole answer's one file.
   */
  id?: string;
  /** When the provider stops keeping it (OpenAI Chat's audio `expires_at`, Unix seconds): a whole answer's (a stream says it after its chunks). */
  expiresAt?: number;
}

/** A block of reasoning: its text, and what a caller sends back with it (Anthropic's signature, the data of a redacted block, Responses' encrypted content). */
export interface ReasoningBlock {
  text: string;
  signature?: string;
  /** A redacted thinking block's data (its text is empty). */
  redacted?: string;
  /**
   * Responses' `encrypted_content` of the `reasoning` item the block ends (asked for with
   * `include: ["reasoning.encrypted_content"]`), as sent: a stateless caller (`store: false`) sends
   * it back in the item. On the item's last block (a block of no text when the item had no
   * summary or text).
   */
  encrypted?: string;
  /**
   * Responses' id of the `reasoning` item the block belongs to, on each of its blocks (one a summary
   * part; a block of no text when the item said none): a caller that keeps the conversation itself
   * sends the item back in the next turn's input, `{type: "reasoning", id, summary, encrypted_content}`
   * (its blocks' texts the summary's `summary_text` parts, the last block's `encrypted`).
   */
  id?: string;
}

/** A call while it grows. */
export class Call {
  id = '';
  name = '';
  /** The arguments so far (fragments joined), or their JSON text when `whole`. */
  text = '';
  /** Bytes of the arguments as sent (escaped), for the limit. */
  bytes = 0;
  /** The arguments when no fragment has text: Anthropic's `input` of the start; Bedrock's `{}` (its start has no input). */
  fallback = '';
  done = false;
  valid: boolean | undefined = undefined;
  /** Gemini's thoughtSignature of the call's part ('' when none). */
  signature = '';
  /** A custom tool's call: its arguments are free text (no `valid`). */
  custom = false;
  /** The item type of a call of a tool the API defines and the client runs ('' for none). */
  builtin: BuiltinCallType | '' = '';
  /** The provider's own tool's result, JSON text as sent ('' until it came). */
  result = '';
  /** The snapshot last handed out, and whether it is still what the call holds. */
  view: ToolCall | null = null;

  constructor(
    /** 0, 1, … among the calls of its kind (client or server). */
    readonly index: number,
    /** The provider's key: OpenAI's `index`, Anthropic's block index, Responses' output index; −1 for none. */
    readonly key: number,
    /** The provider's own tool (Anthropic `server_tool_use`, Responses' hosted tools): not the client's to run. */
    readonly server: boolean,
  ) {}

  /** The arguments as they stand (with the fallback when the fragments brought none). */
  args(): string {
    return this.text === '' ? this.fallback : this.text;
  }

  /** What {@link ToolCall.type} says of the call ('' for a function's). */
  type(): BuiltinCallType | 'custom' | '' {
    return this.custom ? 'custom' : this.builtin;
  }

  snapshot(): ToolCall {
    let v = this.view;
    const args = this.args();
    if (v === null || v.arguments !== args || v.done !== this.done || v.id !== this.id || v.name !== this.name || (v.signature ?? '') !== this.signature
      || (v.type ?? '') !== this.type() || (v.result ?? '') !== this.result) {
      v = { index: this.index, id: this.id, name: this.name, arguments: args, done: this.done };
      if (this.valid !== undefined) v.valid = this.valid;
      if (this.signature !== '') v.signature = this.signature;
      const type = this.type();
      if (type !== '') v.type = type;
      if (this.result !== '') v.result = this.result;
      this.view = v;
    }
    return v;
  }
}

/** The last call of `list` with `key` that has not ended. */
function openCall(list: readonly Call[], key: number): Call | undefined {
  for (let i = list.length - 1; i >= 0; i--) if (list[i].key === key && !list[i].done) return list[i];
  return undefined;
}

/** What a stream's events said: written through its format's description, read by the stream. */
export class Message {
  finishReason: string | undefined = undefined;
  /** The finish reason is the provider's refusal of the prompt (Gemini's block reason), not a candidate's. */
  refused = false;
  usage: Record<string, unknown> | undefined = undefined;
  pings = 0;
  /** Events read in JavaScript that said nothing of the answer, nor were pings (ModelReader.emptyEvents). */
  empty = 0;
  done = false;
  /** The error a description reported while reading a document (taken by the reader). */
  error: string | null = null;
  errorDetail: string | undefined = undefined;
  /** The model's refusal (OpenAI's `refusal`), as far as it came: kept by a stream, '' in a relay. */
  refusal = '';
  /** A refusal came (a relay, which keeps none, writes its stop as one). */
  refusing = false;
  /** Anthropic's explanation of its refusal, its `stop_details` as JSON text (kept by a stream: a whole answer's for Anthropic's clients), or null. */
  refusalDetails: string | null = null;
  /** The sources the answer cites (kept by a stream, within maxReasoningBytes), in the order they came. */
  readonly citations: Citation[] = [];
  /**
   * The sources cited that are kept once (Gemini's metadata, which a later chunk may say again):
   * their addresses, or JSON without one, each with the citation kept for it (null: none kept, or a
   * relay's, which keeps none).
   */
  cited: Map<string, Citation | null> | null = null;
  /** The search behind a grounded answer (Gemini's), the last said; null before any. */
  grounding: Grounding | null = null;
  /** The spans the sources back, in bytes, until the answer's text is whole (then placed on the citations); null when none wait. */
  byteSpans: ByteSpan[] | null = null;
  /**
   * The lists of sources a format says whole again in every event (Perplexity's), and its metadata
   * said whole again (Gemini's grounding), by path: the JSON text last read (read again only when it changed).
   */
  citedLists: Map<number, string> | null = null;
  /** Reasoning blocks; the last one takes more text while `thinkingOpen`. */
  readonly thinking: ReasoningBlock[] = [];
  thinkingOpen = false;
  /** Client tool calls and the provider's own, in the order they began. */
  readonly calls: Call[] = [];
  readonly serverCalls: Call[] = [];
  /** The call that took the last fragment. */
  last: Call | null = null;
  /** Bytes of arguments kept in all (for the limit), and that a fragment would have passed it. */
  argumentBytes = 0;
  tooLong = false;
  /** Bytes of reasoning (text, signatures, redacted data) and refusal kept, as sent (for the limit), and that an event's would have passed it. */
  reasoningBytes = 0;
  reasoningTooLong = false;
  /** Media the model returned (kept by a stream), null before any (most streams have none). */
  media: Media[] | null = null;
  /** The id of the open reasoning item (Responses'), each of whose blocks has it, or null. */
  reasoningItem: string | null = null;
  /** The provider's id of the media said from here on (OpenAI Chat's audio id), or null. */
  mediaId: string | null = null;
  /** Bytes of media data kept, as sent (for maxMediaBytes). */
  mediaBytes = 0;
  /** A call whose arguments a description writes in parts (Vertex's streamed arguments), with the description's state for it; null when none is open. */
  partCall: { call: Call; state: object } | null = null;
  /** Why the event a description read is not one of its format (taken by the reader: ERR_BAD_EVENT). */
  bad: string | null = null;

  /**
   * Places the spans waiting in bytes (see {@link ByteSpan}) on their citations, in UTF-16 units of
   * `text`, the answer's whole text (`nfc`: normalized to NFC, as the provider's quoted text is
   * then compared). A span is placed where its byte offsets fall on characters of the text's UTF-8
   * and, where the provider says what the span's text is, where the text there is that: never at
   * another place (Gemini counts a segment's bytes in its Part, which a stream's answer of several
   * parts, or NFC that changed its text before the span, would put elsewhere). `changed`: NFC
   * changed the text, whose bytes as sent are then not those of `text`: a span whose text the
   * provider does not say is not placed (nothing tells where it is).
   */
  placeSpans(text: string, nfc: boolean, changed = false): void {
    const spans = this.byteSpans;
    if (spans === null) return;
    this.byteSpans = null;
    // (the UTF-16 offset of each byte offset, in one walk of the text; −1 inside a character or past the end)
    const wanted = [...new Set(spans.flatMap((s) => [s.start, s.end]))].sort((a, b) => a - b);
    const units = new Map<number, number>();
    let bytes = 0;
    let i = 0;
    for (const b of wanted) {
      while (bytes < b && i < text.length) {
        const c = text.charCodeAt(i);
        if (c < 0x80) {
          bytes += 1;
          i += 1;
        } else if (c < 0x800) {
          bytes += 2;
          i += 1;
        } else if ((c & 0xfc00) === 0xd800 && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
          bytes += 4;
          i += 2;
        } else {
          bytes += 3;
          i += 1;
        }
      }
      units.set(b, bytes === b ? i : -1);
    }
    for (const s of spans) {
      const start = units.get(s.start)!;
      const end = units.get(s.end)!;
      if (start < 0 || end < start || (changed && s.text === undefined)) continue;
      if (s.text !== undefined && text.slice(start, end) !== (nfc ? s.text.normalize('NFC') : s.text)) continue;
      const span: CitedSpan = { start, end };
      if (s.confidence !== undefined) span.confidence = s.confidence;
      (s.citation.spans ??= []).push(span);
    }
  }

  /** All reasoning text, as sent. */
  reasoning(): string {
    const t = this.thinking;
    return t.length === 0 ? '' : t.length === 1 ? t[0].text : t.map((b) => b.text).join('');
  }

  /** The reasoning block that takes text now (a new one after an ended block, of the open reasoning item). */
  block(): ReasoningBlock {
    const t = this.thinking;
    if (!this.thinkingOpen || t.length === 0) {
      t.push(this.reasoningItem === null ? { text: '' } : { text: '', id: this.reasoningItem });
      this.thinkingOpen = true;
    }
    return t[t.length - 1];
  }

  /** A new client call that comes whole (Ollama's): it takes no fragments after. */
  whole(): Call {
    const c = new Call(this.calls.length, -1, false);
    this.calls.push(c);
    this.last = null;
    return c;
  }

  /** A new call of the provider's own tool that comes whole (Gemini's executableCode). */
  serverWhole(): Call {
    const c = new Call(this.serverCalls.length, -1, true);
    this.serverCalls.push(c);
    this.last = null;
    return c;
  }

  /**
   * The call a provider's key names, begun when new. `key` −1 (no index: Mistral): the call with
   * `id`, or a new one when `id` is new, or the last call when there is no id either. An id other
   * than that of the open call with `key` begins another call at the same key (Ollama's
   * OpenAI-compatible API gives every call of a turn index 0, each with its own id), which then
   * takes the key's fragments.
   */
  call(key: number, id: string, server: boolean): { call: Call; began: boolean } {
    const list = server ? this.serverCalls : this.calls;
    let found: Call | undefined;
    if (key >= 0) {
      // (a fragment names its call by key alone: a server call's too)
      found = openCall(this.calls, key) ?? openCall(this.serverCalls, key);
      if (found !== undefined && id !== '' && found.id !== '' && found.id !== id) found = undefined;
    } else if (id !== '') {
      found = list.find((c) => c.id === id);
    } else if (this.last !== null && this.last.server === server) {
      found = this.last;
    }
    if (found !== undefined) {
      this.last = found;
      return { call: found, began: false };
    }
    const c = new Call(list.length, key, server);
    list.push(c);
    this.last = c;
    return { call: c, began: true };
  }
}
