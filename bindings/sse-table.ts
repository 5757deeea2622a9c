// The byte path's event table: words per event and what each holds (constants only, so that the
// build inlines them where they are used).

/** Words per event in the table. */
export const EV_WORDS = 5;
/** Where the event's data begins in the reader's bytes. */
export const EV_DATA0 = 0;
/** Where it ends. */
export const EV_DATA1 = 1;
/** Index of its type in the batch's types. */
export const EV_TYPE = 2;
/** Index of the last event ID in the batch's IDs. */
export const EV_ID = 3;
/** 1 when the event changed the last event ID. */
export const EV_ID_CHANGED = 4;
