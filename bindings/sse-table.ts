// The byte path's event table: words per event and what each holds. The core's SSE writer reads
// the same table (assembly/abi.ts), so the layout is the contract's.
export { EV_DATA0, EV_DATA1, EV_ID, EV_ID_CHANGED, EV_TYPE, EV_WORDS } from './generated/abi.js';
