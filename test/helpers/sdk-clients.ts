// The official clients' final reading of bytes a relay wrote: openai-node's ChatCompletionStream
// and @anthropic-ai/sdk's MessageStream, each served the bytes by a fetch of its own (no server, no
// retries), as an application would read a gateway's answer.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { expect } from 'vitest';
import type { SseRelay } from '../../bindings/index.js';
import { concat, standardChunkings } from './random.js';

const served = (bytes: Uint8Array) => async () => new Response(bytes.slice(), { headers: { 'content-type': 'text/event-stream' } });

/** openai-node's final chat completion of these bytes. */
export function openaiFinal(bytes: Uint8Array) {
  const c = new OpenAI({ apiKey: 'test', baseURL: 'http://127.0.0.1:9/v1', maxRetries: 0, fetch: served(bytes) });
  return c.chat.completions.stream({ model: 'm', messages: [], stream: true }).finalChatCompletion();
}

/** The Anthropic SDK's final message of these bytes. */
export function anthropicFinal(bytes: Uint8Array) {
  const c = new Anthropic({ apiKey: 'test', baseURL: 'http://127.0.0.1:9', maxRetries: 0, fetch: served(bytes) });
  return c.messages.stream({ model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] }).finalMessage();
}

/**
 * What `read` makes of a relay's bytes for the upstream `body` read whole, cut at every byte and
 * dripped: the same at every cutting (checked), and returned.
 */
export async function sameAtEveryCut(body: Uint8Array, relay: () => SseRelay, read: (bytes: Uint8Array) => Promise<unknown>): Promise<unknown> {
  let first: unknown;
  for (const chunks of standardChunkings(body)) {
    const r = relay();
    const got = await read(concat([...chunks.map((c) => r.push(c).slice()), r.flush().slice()]));
    first ??= got;
    expect(got, `${chunks.length} reads`).toEqual(first);
  }
  return first;
}

/**
 * What the official client makes of a relay's bytes for an agent: the text, the calls (a custom
 * tool's as OpenAI's `custom`; an id the relay made, `toolu_seam…`, as `toolu_seam_<n>`: it differs
 * from relay to relay) and the finish reason.
 */
export async function callsRead(to: 'openai' | 'anthropic', body: Uint8Array): Promise<unknown> {
  if (to === 'openai') {
    const done = await openaiFinal(body);
    const msg = done.choices[0]!.message;
    return { text: msg.content ?? '', calls: (msg.tool_calls ?? []).map((t) => (t.type === 'custom' ? { id: t.id, type: t.type, custom: { name: t.custom.name, input: t.custom.input } } : { id: t.id, type: t.type, function: { name: t.function.name, arguments: t.function.arguments } })), finish: done.choices[0]!.finish_reason };
  }
  const msg = await anthropicFinal(body);
  return {
    text: msg.content.map((b) => (b.type === 'text' ? b.text : '')).join(''),
    calls: msg.content.flatMap((b) => (b.type === 'tool_use' ? [{ id: b.id.replace(/^toolu_seam\w+_(\d+)$/, 'toolu_seam_$1'), name: b.name, input: b.input }] : [])),
    finish: msg.stop_reason,
  };
}

/** openai-node's final response (Responses) of these bytes. */
export function responsesFinal(bytes: Uint8Array) {
  const c = new OpenAI({ apiKey: 'test', baseURL: 'http://127.0.0.1:9/v1', maxRetries: 0, fetch: served(bytes) });
  return c.responses.stream({ model: 'm', input: 'x' }).finalResponse();
}
