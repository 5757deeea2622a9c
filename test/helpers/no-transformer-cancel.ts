// Imported first by a test file: seam's streams then take the runtime for one that does not call a
// transformer's cancel (as Chromium 156 and Firefox 153 ESR), and put their own two sides in front.
import { setCallsCancel } from '../../bindings/core/transform.js';

setCallsCancel(false);
