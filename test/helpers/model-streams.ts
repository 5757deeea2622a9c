// What the model-stream tests share: seeded choices, JSON strings written with escapes at random, a
// client's reading of the bytes a relay wrote (eventsource-parser and JSON.parse), and what a relay
// stream tells a client whose upstream's connection broke.
import { createParser } from 'eventsource-parser';

/** What SseRelayStream tells a client whose upstream's connection broke (SseRelay.abort's reason), written out as expected. */
export const BROKE = { message: 'the upstream connection broke before the stream\'s completion: the answer is cut short', kind: 'server', code: 'ERR_STREAM_TRUNCATED' } as const;

/**
 * A relay's output with its clock (`created`) and the ids it makes (from its clock and a counter)
 * made alike: what two relays of the same bytes may write differently.
 */
export const unclocked = (wire: string): string => wire.replace(/"created":\d+/g, '"created":0')
  .replace(/(chatcmpl-seam|msg_seam|call_seam|toolu_seam)[0-9a-z_]+/g, '$1…');

export type Rnd = () => number;
export const pick = <T>(r: Rnd, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
export const chance = (r: Rnd, p: number): boolean => r() < p;

/**
 * A JSON string for `s`, each code unit written as itself or, with probability `rate`, escaped
 * (lone surrogates, control characters, `"` and `\` always): `"` as `\"` or `\u0022`, `\` as `\\`
 * or `\u005c`, LF as `\n` or `\u000a`.
 */
export function jsonString(r: Rnd, s: string, rate: number): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff;
    const lone = !pair && c >= 0xd800 && c <= 0xdfff;
    if (lone || c < 0x20 || c === 0x22 || c === 0x5c || chance(r, rate)) {
      if (c === 0x22) out += chance(r, 0.5) ? '\\"' : '\\u0022';
      else if (c === 0x5c) out += chance(r, 0.7) ? '\\\\' : '\\u005c';
      else if (c === 0x0a && chance(r, 0.5)) out += '\\n';
      else out += `\\u${c.toString(16).padStart(4, '0')}`;
    } else if (pair) {
      out += s.slice(i, i + 2);
      i++;
    } else {
      out += s[i];
    }
  }
  return `${out}"`;
}

/** Events a client reads from relayed bytes. */
export function clientEvents(bytes: Uint8Array): number {
  let n = 0;
  const p = createParser({ onEvent: () => { n++; } });
  p.feed(new TextDecoder().decode(bytes));
  return n;
}

/** The delta text of choice 0 a client reads from relayed bytes. */
export function clientText(bytes: Uint8Array): string {
  let s = '';
  const p = createParser({
    onEvent: (e) => {
      if (e.data === '[DONE]') return;
      const v = JSON.parse(e.data) as { choices?: { index?: number; delta?: { content?: string | null } }[] };
      for (const c of v.choices ?? []) if ((c.index ?? 0) === 0 && typeof c.delta?.content === 'string') s += c.delta.content;
    },
  });
  p.feed(new TextDecoder().decode(bytes));
  return s;
}

export { concat } from './random.js';
