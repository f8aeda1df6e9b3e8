// Types for scripts/ensure-nats.mjs (imported by vitest's global setup).

export declare const NATS_VERSION: string;
export declare const MIN_VERSION: readonly [number, number, number];
export declare class NatsServerUnavailable extends Error {
  readonly attempts: string[];
}
export declare function cachedBinaryPath(version?: string): string;
export declare function binaryVersion(bin: string): [number, number, number] | string;
export declare function unzipEntry(zip: Buffer, wanted: (name: string) => boolean): Promise<Buffer>;
export declare function ensureNatsServer(options?: { log?: (message: string) => void }): Promise<string>;
