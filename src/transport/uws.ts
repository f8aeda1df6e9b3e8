// The uWebSockets.js import, checked: the package silently falls back to a slow pure-JS
// implementation when its native binary does not load, and we would rather fail loudly.

import uWS from 'uWebSockets.js';

declare module 'uWebSockets.js' {
  interface TemplatedApp {
    /** Closes every socket (present in the binary, missing from the shipped types). */
    close(): TemplatedApp;
    /** listen with options, e.g. LIBUS_LISTEN_EXCLUSIVE_PORT (in the binary, not the types). */
    listen(host: RecognizedString, port: number, options: number, cb: (listenSocket: us_listen_socket | false) => void | Promise<void>): TemplatedApp;
  }
  /** Refuse a port another socket holds, instead of sharing it (SO_REUSEPORT). */
  const LIBUS_LISTEN_EXCLUSIVE_PORT: number;
}

if (!String(uWS.App).includes('[native code]')) {
  throw new Error('uWebSockets.js native binary did not load (fell back to the JS implementation)');
}

export default uWS;
