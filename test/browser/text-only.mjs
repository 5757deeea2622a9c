// Runs in the browser page: counts every way to compile or instantiate WebAssembly (wrapped before
// any of seam is loaded, by the test's init script), then uses only the text layer, from a bundle
// of an entry that imports only it and from the unbundled ESM build.
export async function run(bundle) {
  const use = (m) => {
    const a = new m.TextAssembler();
    const out = a.push('cafe\u0301 👩') + a.push('‍💻 ok');
    const g = new m.GraphemeCommitter();
    return { out, report: a.finish().text, graphemes: m.countText('👨‍👩‍👧‍👦e\u0301').graphemes, committed: g.push('🇯🇵🇫') + g.flush() };
  };
  const bundled = use(await import(bundle));
  const afterBundle = { ...window.__wasmCalls };
  const unbundled = use(await import('/dist/index.js'));
  const afterUnbundled = { ...window.__wasmCalls };
  // the control: the wrappers see the core being compiled
  const m = await import('/dist/index.js');
  new m.SseParser();
  return { bundled, unbundled, afterBundle, afterUnbundled, afterCore: { ...window.__wasmCalls } };
}
