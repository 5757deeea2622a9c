// The gateway's clock: one timer for all its streams, ticking TICKS times per its shortest period
// (keepalive, bodyTimeout, clientTimeout, requestBodyTimeout, maxDuration), so each is noticed
// within a quarter of it at most. At each tick a stream past a timeout is ended (a request's body
// that comes too slowly, a client that takes nothing of its answer, maxDuration, upstream silence), and a stream whose client has had nothing for longer
// than `keepalive` gets a comment (unless its client is not reading anyway). bodyTimeout counts
// from the upstream's last progress (Stream.progressed): neither these comments nor the upstream's
// own keep-alives are any, nor its events that carry nothing of the answer (`{}`, an envelope alone).

const KEEPALIVE = Buffer.from(': keep-alive\n\n');
/** The gateway's clock ticks this many times per its shortest period (a silence is noticed within 1/4 of it). */
const TICKS = 4;

/**
 * Starts the clock of the gateway `gw` (createGateway's state, whose `tick` it moves); returns its
 * timer, for clearInterval.
 */
export function startClock(gw) {
  const { o, m } = gw;
  const streams = gw.budget.streams;
  const periods = [o.bodyTimeout, o.clientTimeout, o.requestBodyTimeout, o.maxDuration];
  if (o.keepalive > 0) periods.push(o.keepalive * 1000);
  const period = Math.max(1, Math.min(...periods) / TICKS);
  const ticksOf = (ms) => Math.max(1, Math.ceil(ms / period));
  const keepaliveTicks = o.keepalive > 0 ? Math.max(1, Math.round((o.keepalive * 1000) / period)) : Infinity;
  const bodyTicks = ticksOf(o.bodyTimeout);
  const clientTicks = ticksOf(o.clientTimeout);
  /** What a client behind on its answer must take of it over clientTimeout (its ticks): 0, none. */
  const windowBytes = (o.minResponseRate * clientTicks * period) / 1000;
  const durationTicks = ticksOf(o.maxDuration);
  /** A request's body: its time at least, and a second more per minRequestRate bytes of it that came. */
  const requestMessage = `the request's body did not arrive within ${o.requestBodyTimeout} ms${o.minRequestRate > 0 ? `, and a second more per ${o.minRequestRate} bytes of it` : ''}`;
  const requestTicks = (got) => ticksOf(o.requestBodyTimeout + (o.minRequestRate > 0 ? (got / o.minRequestRate) * 1000 : 0));
  const ticker = setInterval(() => {
    const tick = ++gw.tick;
    for (const s of streams) {
      const res = s.res;
      const socket = res.socket;
      if (socket && res.writableLength > 0) {
        const taken = socket.bytesWritten - socket.writableLength; // bytes the system took from the socket
        if (taken !== s.taken) { s.taken = taken; s.stalled = 0; } else if (++s.stalled > clientTicks) {
          s.expire('client', `the client took none of its answer for ${o.clientTimeout} ms`);
          continue;
        }
        // (and while it is behind, at least minResponseRate of it over each clientTimeout: a client
        // that took a byte now and then held its stream, and its upstream, until maxDuration)
        if (windowBytes > 0) {
          if (s.behind < 0) { s.behind = tick; s.behindTaken = taken; } else if (tick - s.behind >= clientTicks) {
            if (taken - s.behindTaken < windowBytes) {
              s.expire('client', `the client took ${taken - s.behindTaken} bytes of its answer in ${o.clientTimeout} ms, less than ${o.minResponseRate} a second`);
              continue;
            }
            s.behind = tick;
            s.behindTaken = taken;
          }
        }
      } else {
        s.stalled = 0;
        s.behind = -1;
      }
      if (s.expired) continue;
      if (s.reading >= 0) {
        if (tick - s.born > requestTicks(s.reading)) s.expire('request', requestMessage);
        continue;
      }
      if (tick - s.born > durationTicks) { s.expire('duration', `the stream passed maxDuration (${o.maxDuration} ms)`); continue; }
      if (s.upRes === null || s.upRes.destroyed) continue;
      // (while its client's buffer is full the gateway is not reading its upstream: that is no
      // silence of the upstream's, and bodyTimeout counts from the read's resumption)
      if (s.paused) s.heard = tick;
      if (tick - s.heard > bodyTicks) {
        if (s.silent !== null) s.silent(); // (an error body: what came of it is the answer)
        else s.expire('body', s.pinged ? `the upstream sent nothing of its answer (keep-alives, empty events) for ${o.bodyTimeout} ms` : `the upstream sent nothing for ${o.bodyTimeout} ms`);
        continue;
      }
      // (the client's silence, not the upstream's: an upstream's pings that the relay writes nothing
      // of, Anthropic's to an OpenAI client, kept the gateway from writing its own while the
      // client had nothing for as long as they went on)
      if (tick - s.beat <= keepaliveTicks || !res.headersSent || res.writableLength > 0 || res.writableEnded) continue;
      s.beat = tick;
      m.keepalives.inc();
      m.bytesOut.inc(KEEPALIVE.length);
      res.write(KEEPALIVE);
      s.wroteNow();
    }
  }, period);
  ticker.unref();
  return ticker;
}
