// The core memory in use once the collector is done with what earlier tests left: for tests that
// compare coreMemoryUsed() before and after, in a process that ran other suites first.
import { coreMemoryUsed } from '../../bindings/index.js';

const tick = () => new Promise((r) => setTimeout(r, 0));

/**
 * The core memory in use once what earlier tests left to the collector is gone: decoders they did
 * not dispose are freed by the finalization registry when collected, which would otherwise happen
 * in the middle of a test here and move its baseline (the portable suites run every suite in one
 * process). Collects (where the runtime lets a test: --expose-gc, Bun) until two readings agree.
 */
export async function settled(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  let last = -1;
  for (let i = 0; i < 20; i++) {
    gc?.();
    await tick();
    await tick();
    const now = coreMemoryUsed();
    if (now === last) return now;
    last = now;
  }
  return last;
}

