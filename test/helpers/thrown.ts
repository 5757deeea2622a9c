/** The error `f` throws; fails the test when it returns. */
export function thrown<E extends Error = Error & Record<string, unknown>>(f: () => unknown): E {
  try {
    f();
  } catch (e) {
    return e as E;
  }
  throw new Error('did not throw');
}
