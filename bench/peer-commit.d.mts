/** The peer's text layer (bench/peer-commit.mjs): each delta held back at its last cluster, NFC per commit. */
export function holdBack(segmenter: Intl.Segmenter): { push(delta: string): void; end(): string };
