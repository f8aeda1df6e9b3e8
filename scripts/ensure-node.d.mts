// Types for scripts/ensure-node.mjs (imported by the runtime tests).

export declare const NODE_VERSIONS: Readonly<Record<number, string>>;
export declare function cachedNode(version: string): string;
export declare function ensureNode(line: number | string): string;
