// The uWebSockets.js import, checked: the package silently falls back to a slow pure-JS
// implementation when its native binary does not load, and we would rather fail loudly.

import uWS from 'uWebSockets.js';

declare module 'uWebSockets.js' {
  interface TemplatedApp {
    /** Closes every socket (present in the binary, missing from the shipped types). */
    close(): TemplatedApp;
  }
}

if (!String(uWS.App).includes('[native code]')) {
  throw new Error('uWebSockets.js native binary did not load (fell back to the JS implementation)');
}

export default uWS;
