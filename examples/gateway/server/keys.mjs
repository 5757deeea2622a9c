// Who may use the gateway: the keys a client must present (apiKeys), held as digests and compared
// in constant time, and the loopback interface, which a gateway without keys is kept to
// (isLoopback; it also tells a plain-http upstream beyond this machine).
import { createHash, timingSafeEqual } from 'node:crypto';
import { clientKey } from '../requests/index.mjs';

/** Whether a listening host is the loopback interface only. */
export function isLoopback(host) {
  const h = String(host ?? '').replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h) || /^::ffff:127\.\d+\.\d+\.\d+$/.test(h);
}

/** A key's digest: keys are compared as SHA-256 digests (of one length), in constant time. */
export const digest = (key) => createHash('sha256').update(key, 'latin1').digest();

/**
 * Whether a request carries one of the keys (their digests, `keys`; every one compared, in
 * constant time), read as the key passed on to an upstream is (clientKey).
 */
export function authorized(keys, headers) {
  const key = clientKey(headers);
  if (key === undefined) return false;
  const d = digest(key);
  let ok = false;
  for (const k of keys) ok = timingSafeEqual(d, k) || ok;
  return ok;
}
