/** The error `f` throws; fails the test when it returns. */
export function thrown<E extends Error = Error & Record<string, unknown>>(f: () => unknown): E {
  try {
    f();
  } catch (e) {
    return e as E;
  }
  throw new Error('did not throw');
}

/**
 * What a decoder gives for `reads` then its flush: the items, and its first error as "code offset"
 * (null when none), with the items the error carries (`key`: `events`, `lines`) counted as given.
 */
export function outcome<T>(d: { push(c: Uint8Array): T[]; flush(): T[] }, reads: Uint8Array[], key: 'events' | 'lines'): { got: T[]; err: string | null } {
  const got: T[] = [];
  try {
    for (const c of reads) got.push(...d.push(c));
    got.push(...d.flush());
    return { got, err: null };
  } catch (e) {
    const x = e as { code?: string; offset?: number } & Partial<Record<typeof key, T[]>>;
    return { got: [...got, ...(x[key] ?? [])], err: `${x.code} ${x.offset}` };
  }
}
