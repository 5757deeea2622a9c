/** The error `f` throws; fails the test when it returns. */
export function thrown<E extends Error = Error & Record<string, unknown>>(f: () => unknown): E {
  try {
    f();
  } catch (e) {
    return e as E;
  }
  throw new Error('did not throw');
}

/** A model stream's error as the tests read it (ModelStreamError's fields, known by its name: this file imports no build of the library). */
export interface StreamError extends Error { code: string; offset: number; text: string; providerMessage?: string; providerCode?: string }

/**
 * What a model stream gives for `reads` then its flush: all its text (with the text its
 * ModelStreamError carries), and that error, undefined when none; any other error is thrown.
 */
export function textOutcome(m: { push(c: Uint8Array): string; flush(): string }, reads: Uint8Array[]): { text: string; error: StreamError | undefined } {
  let text = '';
  try {
    for (const c of reads) text += m.push(c);
    text += m.flush();
    return { text, error: undefined };
  } catch (e) {
    if (!(e instanceof Error) || e.name !== 'ModelStreamError') throw e;
    const error = e as StreamError;
    return { text: text + error.text, error };
  }
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

/**
 * An event stream's messages as a message decoder gives them for `reads` then its flush, the
 * messages its framing error carries among them, and that error (`code`, `offset`), undefined when
 * none; an error that is not a `Framing` (the library's EventStreamError, passed in: this file
 * imports no build of the library) is thrown. The decoder is disposed.
 */
export function messagesOf<M>(
  d: { push(c: Uint8Array): M[]; flush(): unknown; dispose(): void }, reads: Uint8Array[],
  Framing: abstract new (...args: never[]) => { code: string; offset: number; messages: readonly unknown[] },
): { messages: M[]; framing: { code: string; offset: number } | undefined } {
  const messages: M[] = [];
  try {
    for (const c of reads) messages.push(...d.push(c));
    d.flush();
    return { messages, framing: undefined };
  } catch (x) {
    if (!(x instanceof Framing)) throw x;
    messages.push(...(x.messages as M[]));
    return { messages, framing: { code: x.code, offset: x.offset } };
  } finally {
    d.dispose();
  }
}
