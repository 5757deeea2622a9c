// The gateway's connection caps, in total (maxConnections) and per client address
// (maxConnectionsPerAddress): past them a connection is answered 503 and closed.
import { errorBody, socketReply } from './replies.mjs';

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
    const address = socket.remoteAddress ?? '';
    const mine = perAddress.get(address) ?? 0;
    const over = o.maxConnections > 0 && connections >= o.maxConnections ? 'total'
      : o.maxConnectionsPerAddress > 0 && mine >= o.maxConnectionsPerAddress ? 'per_address' : null;
    if (over !== null) {
      m.connectionsRejected.inc({ limit: over });
      const body = errorBody(over === 'total' ? `the gateway has ${connections} connections open (maxConnections ${o.maxConnections}); retry later`
        : `this address has ${mine} connections open (maxConnectionsPerAddress ${o.maxConnectionsPerAddress}); retry later`, 'overloaded', 'ERR_MAX_CONNECTIONS');
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
