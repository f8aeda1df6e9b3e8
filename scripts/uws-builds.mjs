// The uWebSockets.js builds the node can serve with, newest first, and the probe that picks
// the first whose binary loads on this Node.js and libc (docs/runtime.md has the matrix).
// Dependency-free: the install script runs it before anything is built, and
// src/transport/uws.ts loads the server through it.

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The dependencies (package.json aliases) that carry a build, newest first. */
export const UWS_BUILDS = ['uWebSockets.js', 'uWebSockets.js-20.30'];

/** The builds to try: all, or the one PRECONF_NODE_UWS names (an operator pinning a build,
 *  or a bench comparing them on one Node.js). */
function candidates() {
  const pinned = process.env.PRECONF_NODE_UWS;
  return pinned ? [pinned] : UWS_BUILDS;
}

/** Where a package keeps its binaries: 20.57 at its root, 20.30 in binaries/. */
const BINARY_DIRS = ['', 'binaries'];

const require = createRequire(import.meta.url);

/** This runtime as the builds' binaries are chosen: Node.js line, ABI, libc. */
export function runtime() {
  const header = process.report?.getReport?.().header;
  const glibc = header?.glibcVersionRuntime;
  const libc = glibc ? `glibc ${glibc}` : process.platform === 'linux' ? 'a libc other than glibc' : process.platform;
  return { node: process.version, abi: process.versions.modules, platform: process.platform, arch: process.arch, libc };
}

/** The directory and package.json of an installed dependency, or null. The builds' `exports`
 *  hide package.json, so the walk starts from the resolved entry point. */
function installed(name) {
  let entry;
  try {
    entry = require.resolve(name);
  } catch {
    return null;
  }
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8'));
    if (pkg.name && pkg.version) return { dir, pkg };
  }
  return null;
}

/** Why a binary did not load, in a few words. */
function reason(error) {
  const text = String(error?.message ?? error);
  const glibc = /GLIBC_([0-9.]+)' not found/.exec(text);
  if (glibc) return `needs glibc ${glibc[1]} or newer`;
  const musl = /(ld-linux|__fprintf_chk|symbol not found)/.exec(text);
  if (musl) return 'needs glibc';
  return text.split('\n')[0];
}

/**
 * Loads the first build whose binary loads here. The package's own entry point is not used:
 * 20.30's falls back to a slow JavaScript server with console warnings instead of failing.
 * @returns {{ uws: object, build: { name: string, version: string, alias: string } } | { uws: null, tried: string[] }}
 */
export function loadUws() {
  const file = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  const tried = [];
  for (const alias of candidates()) {
    const found = installed(alias);
    if (!found) {
      if (process.env.PRECONF_NODE_UWS) tried.push(`${alias} (PRECONF_NODE_UWS): not installed`);
      continue;
    }
    const label = `${found.pkg.name} ${found.pkg.version}`;
    const binary = BINARY_DIRS.map((d) => join(found.dir, d, file)).find((p) => existsSync(p));
    if (!binary) {
      tried.push(`${label}: no binary for Node.js ${process.version.split('.')[0]} (ABI ${process.versions.modules})`);
      continue;
    }
    try {
      const uws = require(binary);
      return { uws, build: { name: found.pkg.name, version: found.pkg.version, alias } };
    } catch (e) {
      tried.push(`${label}: ${reason(e)}`);
    }
  }
  return { uws: null, tried };
}

/** The one line a user reads when no build loads (callers prefix the program's name). */
export function noUwsMessage(tried) {
  const r = runtime();
  const builds = tried.length > 0 ? tried.join('; ') : `none of ${UWS_BUILDS.join(', ')} is installed`;
  return (
    `no uWebSockets.js build loads on Node.js ${r.node} (${r.platform}-${r.arch}, ${r.libc}): ${builds}. ` +
    'Node.js 20 runs with glibc 2.28 or newer; Node.js 22, 24 and 25 need glibc 2.38 or newer ' +
    '(Debian 13, Ubuntu 24.04, RHEL 10); Node.js 26 has no build yet (docs/runtime.md).'
  );
}
