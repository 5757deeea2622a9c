/** Whether this runtime runs eventsource-parser 4 (bench/peer-versions.mjs). */
export const modernSse: boolean;
/** Whether this runtime runs undici 8 (bench/peer-versions.mjs). */
export const modernUndici: boolean;
