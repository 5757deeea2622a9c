// The JSON reader's path programs: the paths a format asks for (`choices[*].delta.content`),
// compiled once into the trie the core walks (layout: assembly/abi.ts, "JSON reader: path
// program"). Path i is reported with id i.
import {
  JP_EDGE_BYTES, JP_EDGE_CHILD, JP_EDGE_KEY_LEN, JP_EDGE_KEY_OFF, JP_NODE_EDGES, JP_NODE_ID, JP_NODE_LENGTHS, JP_NODE_NKEYS,
  JP_NODE_STAR, JP_NO_PATH, JSON_KEY_MAX,
} from '../core/generated/abi.js';

/** A path step: a key, or STAR for every element of an array. */
export const STAR = Symbol('[*]');
export type Step = string | typeof STAR;

/** `choices[*].delta.content` → ['choices', STAR, 'delta', 'content']; '' is the document. */
export function parsePath(path: string): Step[] {
  const steps: Step[] = [];
  for (const m of path.matchAll(/\[\*\]|[^.[\]]+/g)) steps.push(m[0] === '[*]' ? STAR : m[0]);
  return steps;
}

interface TrieNode { id: number; keys: Map<string, TrieNode>; star: TrieNode | null }

/** The path program (layout: assembly/abi.ts, "JSON reader: path program") for paths; path i has id i. */
export function compilePaths(paths: string[]): Uint8Array {
  const root: TrieNode = { id: JP_NO_PATH, keys: new Map(), star: null };
  paths.forEach((path, id) => {
    let n = root;
    for (const s of parsePath(path)) {
      if (s === STAR) n = n.star ??= { id: JP_NO_PATH, keys: new Map(), star: null };
      else {
        let c = n.keys.get(s);
        if (!c) n.keys.set(s, (c = { id: JP_NO_PATH, keys: new Map(), star: null }));
        n = c;
      }
    }
    if (n.id !== JP_NO_PATH) throw new Error(`compilePaths: path ${path} given twice`);
    n.id = id;
  });
  // node offsets in breadth-first order, then the keys' bytes
  const order: TrieNode[] = [root];
  for (let i = 0; i < order.length; i++) {
    const n = order[i];
    for (const c of n.keys.values()) order.push(c);
    if (n.star) order.push(n.star);
  }
  const at = new Map<TrieNode, number>();
  let size = 0;
  for (const n of order) { at.set(n, size); size += JP_NODE_EDGES + JP_EDGE_BYTES * n.keys.size; }
  const enc = new TextEncoder();
  let keyAt = size;
  const prog = new Uint8Array(size + [...order].reduce((k, n) => k + [...n.keys.keys()].reduce((a, s) => a + enc.encode(s).length, 0), 0));
  const dv = new DataView(prog.buffer);
  for (const n of order) {
    const o = at.get(n)!;
    dv.setUint16(o + JP_NODE_ID, n.id, true);
    dv.setUint16(o + JP_NODE_NKEYS, n.keys.size, true);
    dv.setUint32(o + JP_NODE_STAR, n.star ? at.get(n.star)! : 0, true);
    let lengths = 0;
    for (const k of n.keys.keys()) lengths |= 1 << (enc.encode(k).length & 31);
    dv.setUint32(o + JP_NODE_LENGTHS, lengths >>> 0, true);
    let e = o + JP_NODE_EDGES;
    for (const [k, c] of n.keys) {
      const b = enc.encode(k);
      if (b.length > JSON_KEY_MAX) throw new RangeError(`compilePaths: key ${JSON.stringify(k)} is longer than ${JSON_KEY_MAX} bytes`);
      dv.setUint32(e + JP_EDGE_CHILD, at.get(c)!, true);
      dv.setUint16(e + JP_EDGE_KEY_LEN, b.length, true);
      dv.setUint16(e + JP_EDGE_KEY_OFF, keyAt, true);
      prog.set(b, keyAt);
      keyAt += b.length;
      e += JP_EDGE_BYTES;
    }
  }
  return prog;
}
