// Types for scripts/platforms.mjs (imported by src/native.ts).

export declare const SUPPORTED_PLATFORMS: readonly string[];
export declare function currentPlatform(): string;
export declare function platformPackage(platform: string): string;
export declare function addonFile(platform: string): string;
export declare function noAddonMessage(platform: string): string;
