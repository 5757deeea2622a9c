/** Whether this runtime runs eventsource-parser 4 (bench/peer-versions.mjs). */
export const modernSse: boolean;
/** The package of the eventsource-parser this runtime runs: `eventsource-parser-4` or `eventsource-parser`. */
export const ssePeer: string;
/** The package of the undici this runtime runs: `undici-8` or `undici`. */
export const undiciPeer: string;
