// uWebSockets.js, from the newest installed build whose binary loads on this Node.js and libc
// (scripts/uws-builds.mjs; the matrix is in docs/runtime.md). Where none loads, importing this
// module throws one line that says what was tried and what to do.

import type * as UWS from 'uWebSockets.js';
import { loadUws, noUwsMessage, type UwsBuild } from '../../scripts/uws-builds.mjs';

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

/** No build of uWebSockets.js loads here: the message is the whole story, not a stack. */
export class UwsUnavailable extends Error {
  override name = 'UwsUnavailable';
}

const loaded = loadUws();
if (loaded.uws === null) throw new UwsUnavailable(noUwsMessage(loaded.tried));

/** Which build serves (the start line and /health say it). */
export const uwsBuild: UwsBuild = loaded.build;

const uWS = loaded.uws as typeof UWS;
// The types callers name as `uWS.X`, beside the value (a namespace of types only merges with it).
declare namespace uWS {
  export type TemplatedApp = UWS.TemplatedApp;
  export type us_listen_socket = UWS.us_listen_socket;
}
export default uWS;
