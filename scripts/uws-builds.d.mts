// Types for scripts/uws-builds.mjs (imported by src/transport/uws.ts).

export interface UwsBuild {
  /** The package's own name and version (e.g. @btc-vision/uwebsockets.js 20.57.0). */
  name: string;
  version: string;
  /** The dependency alias it is installed under. */
  alias: string;
}
export declare const UWS_BUILDS: readonly string[];
export declare function runtime(): { node: string; abi: string; platform: string; arch: string; libc: string };
export declare function loadUws(): { uws: object; build: UwsBuild } | { uws: null; tried: string[] };
export declare function noUwsMessage(tried: readonly string[]): string;
