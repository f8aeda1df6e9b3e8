// Which platforms a prebuilt addon is published for, and what a user is told when theirs is
// not one of them. Shared by the install script and the runtime loader (src/native.ts);
// dependency-free, because it runs before anything is installed.

/** Platforms with a prebuilt package `preconf-node-<platform>` (npm/<platform>/package.json). */
export const SUPPORTED_PLATFORMS = ['linux-x64-gnu'];

/** This machine's platform, as the addon's file and package are named. PRECONF_NODE_PLATFORM
 *  overrides it (tests use it to play a platform nothing is published for). */
export function currentPlatform() {
  return process.env.PRECONF_NODE_PLATFORM || `${process.platform}-${process.arch}-gnu`;
}

export const platformPackage = (platform) => `preconf-node-${platform}`;
export const addonFile = (platform) => `preconf-node.${platform}.node`;

/** The one message for "no addon loads here and none can be built" (callers prefix it). */
export function noAddonMessage(platform) {
  if (SUPPORTED_PLATFORMS.includes(platform)) {
    return (
      `the prebuilt addon for ${platform} is not installed (package ${platformPackage(platform)}, ` +
      'an optional dependency). Reinstall with optional dependencies (npm install --include=optional), ' +
      'or install Rust (https://rustup.rs) to build it from source.'
    );
  }
  return (
    `no prebuilt addon for ${platform}: prebuilt addons exist for ${SUPPORTED_PLATFORMS.join(', ')}. ` +
    'On other platforms install Rust (https://rustup.rs) and build from the source repository ("npm run build:native").'
  );
}
