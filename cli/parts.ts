// `decode --parts`: what a model stream says besides its text, on standard error as it comes: its
// reasoning (each block under a `[reasoning]` line, dimmed on a terminal), each client tool call
// once it has ended, the provider's own tool calls (each once ended, and its result's size once it
// came; at the end, each call the stream began and did not end, said to be cut short), each source it cites and each image or sound it returns (its type and size), in
// the order the events said them (the library's
// ModelPartReader pushes a read an event at a time). The text stays alone on standard output.
import type { ModelPart, ToolCall } from 'seam-stream';

const CUT_SHORT = ' (cut short: the stream stopped before the call ended)';

export class PartPrinter {
  /** The reasoning block being printed, or -1 when none is open. */
  private block = -1;
  /** Standard error's last write did not end its line. */
  private midLine = false;
  /** The calls printed (once ended), by index. */
  private readonly printed = new Set<number>();
  /** The provider's own calls printed (once ended), and the result printed of each, by index (a result said again replaces it). */
  private readonly serverPrinted = new Set<number>();
  private readonly resultPrinted = new Map<number, string>();

  /**
   * `write`: to standard error. `dim`: reasoning in faint type (a terminal, without NO_COLOR).
   * `endTextLine`: whether the answer's text on the same terminal had not ended its line, which
   * the part about to be written ends (so that the next part, with no text between, does not
   * end it again: a blank line).
   */
  constructor(
    private readonly write: (s: string) => void,
    private readonly dim: boolean,
    private readonly endTextLine: () => boolean,
  ) {}

  /** A part that is not the answer's text (those are ignored: the refusal is said at the end). */
  show(p: ModelPart): void {
    if (p.type === 'reasoning') {
      if (p.text === '') return;
      if (p.block !== this.block) {
        this.startLine();
        this.line('[reasoning]');
        this.block = p.block;
      }
      this.write(this.dim ? `\x1b[2m${p.text}\x1b[22m` : p.text);
      this.midLine = !p.text.endsWith('\n');
    } else if (p.type === 'tool-call') {
      if (!p.call.done) return;
      this.call(p.call, p.call.valid === false ? ' (arguments that are not one JSON value)' : '');
    } else if (p.type === 'server-tool-call') {
      // (the provider's own tool: its call once ended, its result once it came; a result is said by its size)
      const c = p.call;
      if (c.done && !this.serverPrinted.has(c.index)) {
        this.serverPrinted.add(c.index);
        this.startLine();
        this.line(`[provider's tool call ${c.index}] ${c.name}${c.id ? ` (${c.id})` : ''} ${c.arguments}`);
      }
      if (c.result !== undefined && this.resultPrinted.get(c.index) !== c.result) {
        this.resultPrinted.set(c.index, c.result);
        this.startLine();
        this.line(`[provider's tool result ${c.index}] ${c.name}${c.id ? ` (${c.id})` : ''}, ${Buffer.byteLength(c.result)} bytes of JSON`);
      }
    } else if (p.type === 'citation') {
      const c = p.citation;
      const said = [c.title, c.url === undefined ? undefined : `<${c.url}>`, c.citedText === undefined ? undefined : JSON.stringify(c.citedText)].filter((x) => x !== undefined && x !== '');
      this.startLine();
      this.line(`[source] ${said.length > 0 ? said.join(' ') : JSON.stringify(c.source)}`);
    } else if (p.type === 'media') {
      // (what it is and its size: its base64 is not for a terminal)
      const m = p.media;
      this.startLine();
      this.line(`[media] ${m.mimeType || 'of no type'}, ${m.bytes} bytes of base64${m.thought ? ', a thought' : ''}${m.omitted ? ', its data not kept (past the media limit)' : ''}`);
    }
  }

  /** The answer's text comes next: an open reasoning block ends its line. */
  text(): void {
    if (this.block < 0) return;
    this.endLine();
    this.block = -1;
  }

  /**
   * The command ends: what is open ends its line, and each call the stream began and did not end
   * (it stopped first), the client's and the provider's own, is printed as it stands, said to be
   * cut short, before the command's messages.
   */
  end(calls: readonly ToolCall[] = [], serverCalls: readonly ToolCall[] = []): void {
    for (const c of calls) if (!this.printed.has(c.index)) this.call(c, CUT_SHORT);
    for (const c of serverCalls) {
      if (this.serverPrinted.has(c.index)) continue;
      this.serverPrinted.add(c.index);
      this.startLine();
      this.line(`[provider's tool call ${c.index}] ${c.name}${c.id ? ` (${c.id})` : ''} ${c.arguments}${CUT_SHORT}`);
    }
    this.endLine();
    this.block = -1;
  }

  private call(c: ToolCall, note: string): void {
    this.printed.add(c.index);
    this.startLine();
    this.line(`[tool call ${c.index}] ${c.name}${c.id ? ` (${c.id})` : ''} ${c.arguments}${note}`);
  }

  /** A part begins on a line of its own: after reasoning, and after the answer's text on the same terminal. */
  private startLine(): void {
    if (this.midLine) this.endLine();
    else if (this.block < 0 && this.endTextLine()) this.write('\n');
    this.block = -1;
  }

  private endLine(): void {
    if (!this.midLine) return;
    this.write('\n');
    this.midLine = false;
  }

  private line(s: string): void {
    this.write(`${s}\n`);
    this.midLine = false;
  }
}

