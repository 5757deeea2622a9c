// The gateway's connection caps, in total (maxConnections) and per client address
// (maxConnectionsPerAddress; an IPv6 client's /64 network): past them a connection is answered
// 503 and closed.
import { errorBody, socketReply } from './replies.mjs';

/**
 * The address a connection counts under for maxConnectionsPerAddress: an IPv4 address (an
 * IPv4-mapped IPv6 one too) as it is, an IPv6 address by its /64 network, the least one host is
 * given (each of its 2^64 addresses a new client otherwise: the cap was no cap against one host
 * of IPv6).
 */
export function addressGroup(address) {
  if (!address.includes(':')) return address;
  const a = address.toLowerCase().replace(/%.*$/, ''); // (a zone)
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (mapped !== null) return mapped[1];
  const [head, tail] = a.split('::');
  const groups = (s) => (s === '' ? [] : s.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]))); // (a dotted tail: two groups)
  const h = groups(head);
  const all = tail === undefined ? h : [...h, ...Array(Math.max(0, 8 - h.length - groups(tail).length)).fill('0'), ...groups(tail)];
  return `${all.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`;
}

/**
 * Caps the connections of `server` (the gateway's options `o`, its metrics `m`; `nextId()`, a new
 * request id, which the 503 carries as every answer does); returns `open()`, how many are open
 * now, `rejected(socket)`, whether a connection was answered 503: Node's HTTP server reads
 * it all the same (its parser is on the socket), and a request read from it is not served; and
 * `none()`, a promise of the moment none is open.
 */
export function capConnections(server, o, m, nextId) {
  const perAddress = new Map();
  const rejected = new WeakSet();
  let connections = 0;
  const waiting = []; // (none(): resolved when the last connection closes)
  server.on('connection', (socket) => {
    const address = addressGroup(socket.remoteAddress ?? '');
    const mine = perAddress.get(address) ?? 0;
    const over = o.maxConnections > 0 && connections >= o.maxConnections ? 'total'
      : o.maxConnectionsPerAddress > 0 && mine >= o.maxConnectionsPerAddress ? 'per_address' : null;
    if (over !== null) {
      m.connectionsRejected.inc({ limit: over });
      const body = errorBody(over === 'total' ? `the gateway has ${connections} connections open (maxConnections ${o.maxConnections}); retry later`
        : `this address${address.endsWith('/64') ? `'s /64 network` : ''} has ${mine} connections open (maxConnectionsPerAddress ${o.maxConnectionsPerAddress}); retry later`, 'overloaded', 'ERR_MAX_CONNECTIONS');
      rejected.add(socket);
      socket.on('error', () => {});
      socket.end(socketReply(503, 'Service Unavailable', body, nextId(), 'retry-after: 1\r\n'));
      socket.resume(); // (what the client sends is read and dropped, so that it reads the 503 rather than a reset)
      // (cut after a second, or let go when it closes first: the timer held each closed socket for
      // its second, all of a flood of them)
      const cut = setTimeout(() => socket.destroy(), 1000).unref();
      socket.once('close', () => clearTimeout(cut));
      return;
    }
    connections++;
    perAddress.set(address, mine + 1);
    m.connectionsOpen.inc();
    socket.once('close', () => {
      connections--;
      const left = perAddress.get(address) - 1;
      if (left === 0) perAddress.delete(address);
      else perAddress.set(address, left);
      m.connectionsOpen.dec();
      if (connections === 0) for (const resolve of waiting.splice(0)) resolve();
    });
  });
  return {
    open: () => connections,
    rejected: (socket) => rejected.has(socket),
    /** Resolves once no connection is open (a socket's 'close' comes after its server counts it gone). */
    none: () => (connections === 0 ? Promise.resolve() : new Promise((resolve) => waiting.push(resolve))),
  };
}
