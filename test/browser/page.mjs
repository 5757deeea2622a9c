// Runs in the browser page (plain JS, served as is): exercises the ESM build.
export async function run() {
  const m = await import('/dist/index.js');
  const text = 'data: {"delta":"cafe\u0301 世界 👩‍💻 🇯🇵 क्ष"}\r\n\r\n: ping\n\nevent: done\ndata: [DONE]\r\r';
  const bytes = new TextEncoder().encode(text);
  const cuts = [];
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  let utf8Ok = true;
  let sseOk = true;
  const whole = new m.SseParser().push(bytes);
  for (let k = 0; k < 200; k++) {
    const pieces = [];
    for (let i = 0; i < bytes.length;) {
      const n = 1 + Math.floor(rnd() * 12);
      pieces.push(bytes.subarray(i, i + n));
      i += n;
    }
    const d = new m.Utf8Decoder();
    const td = new TextDecoder();
    let a = '';
    let b = '';
    for (const p of pieces) {
      a += d.push(p);
      b += td.decode(p, { stream: true });
    }
    if (a + d.flush() !== b + td.decode()) utf8Ok = false;
    const p = new m.SseParser();
    const evs = pieces.flatMap((x) => p.push(x)).concat(p.flush());
    if (JSON.stringify(evs) !== JSON.stringify(whole)) sseOk = false;
    cuts.push(String(pieces.length));
  }
  // reads long and short (the long ones decoded by TextDecoder, the short ones by the core, a
  // character cut between them completed on either side), and a bad byte after each kind of read
  const long = new TextEncoder().encode('cafe\u0301 世界 👩‍💻 🇯🇵 क्ष, plain words of text; '.repeat(150));
  const longText = new TextDecoder().decode(long);
  let mixedReads = 0;
  for (let k = 0; k < 60; k++) {
    const d = new m.Utf8Decoder();
    let a = '';
    for (let i = 0; i < long.length;) {
      const n = 1 + Math.floor(rnd() * (k % 2 === 0 ? 600 : 160));
      a += d.push(long.subarray(i, i + n));
      i += n;
    }
    if (a + d.flush() === longText) mixedReads++;
  }
  const badAfter = [];
  for (const before of [20, 300]) {
    const b = long.slice(0, 2000);
    const at = new TextEncoder().encode(longText.slice(0, before + 100)).length;
    b[at] = 0xff;
    const d = new m.Utf8Decoder();
    let got = '';
    try {
      got += d.push(b.subarray(0, before));
      got += d.push(b.subarray(before));
    } catch (e) {
      badAfter.push({ code: e.code, offset: e.offset, whole: got + e.text === new TextDecoder().decode(b.subarray(0, at)), at });
    }
  }
  let bad = null;
  try {
    new m.Utf8Decoder().push(new Uint8Array([0x41, 0xed, 0xa0, 0x80]));
  } catch (e) {
    bad = { code: e.code, offset: e.offset };
  }
  let spanning = null;
  const sd = new m.Utf8Decoder();
  const first = sd.push(new Uint8Array([0x41, 0x42, 0xe4, 0xb8]));
  try {
    sd.push(new Uint8Array([0x43]));
  } catch (e) {
    spanning = { first, code: e.code, offset: e.offset, text: e.text, pending: sd.pendingBytes };
  }
  const lenient = new m.Utf8Decoder({ fatal: false }).decode(new Uint8Array([0x41, 0xf0, 0x9f, 0x42, 0xff]));
  const asm = new m.TextAssembler();
  asm.push('cafe');
  asm.push('\u0301 👩');
  asm.push('‍💻');
  const report = asm.finish();
  return {
    backend: m.wasmBackend(), utf8Ok, sseOk, whole, bad, spanning, lenient, mixedReads, badAfter,
    lenientOracle: new TextDecoder().decode(new Uint8Array([0x41, 0xf0, 0x9f, 0x42, 0xff])),
    report: { text: report.text, graphemes: report.graphemes, sha256: report.sha256 },
    hasBuffer: typeof (globalThis).Buffer !== 'undefined',
    // what core/strings.ts's jsEngine() reads (SSE data whole in Firefox, in pieces in Chromium):
    // a native InternalError in SpiderMonkey only
    spiderMonkey: typeof (globalThis).InternalError === 'function' && Function.prototype.toString.call(globalThis.InternalError).includes('[native code]'),
  };
    }
