// The types of layer 2's output that the other layers name (no code).

/** A dispatched event. */
export interface SseEvent {
  /** The event type: `'message'` when no (or an empty) `event` field was given. */
  type: string;
  /** The `data` lines joined with `'\n'`. */
  data: string;
  /** The last event ID at dispatch time (it persists across events, per the standard). */
  id: string;
}
