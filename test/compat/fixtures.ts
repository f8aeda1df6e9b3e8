// Loads the rpc-compat kit: finds it, walks tests/ in the order hive does, and parses every
// `.io` file per the kit's README (comments, `>>`/`<<` pairs, `speconly:` header comments).

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isObject, JsonSyntaxError, parseJson, type Json } from './json.js';

export interface Exchange {
  /** The request body, sent exactly as written in the file. */
  request: string;
  /** The recorded response, parsed. */
  expected: Json;
  /** 1-based line numbers of the `>>` and `<<` lines. */
  requestLine: number;
  responseLine: number;
}

export interface Fixture {
  /** Path below tests/, with forward slashes: `eth_call/call-revert-abi-error.io`. */
  name: string;
  /** The directory, which names the method under test. */
  method: string;
  /** Header comments before the first request, one per line. */
  description: string[];
  /** A header comment starting with `speconly:` marks the test as checked for shape only. */
  speconly: boolean;
  exchanges: Exchange[];
}

export class FixtureError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    problem: string,
  ) {
    super(line > 0 ? `${file}:${line}: ${problem}` : `${file}: ${problem}`);
    this.name = 'FixtureError';
  }
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** `$RPC_COMPAT_DIR`, else the copy committed in the repository (test/fixtures/rpc-compat). */
export function kitDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env.RPC_COMPAT_DIR ? resolve(env.RPC_COMPAT_DIR) : join(repoRoot, 'test', 'fixtures', 'rpc-compat');
  if (!existsSync(join(dir, 'tests')) || !existsSync(join(dir, 'chain', 'genesis.json'))) {
    throw new FixtureError(dir, 0, 'not an rpc-compat kit (expected tests/ and chain/genesis.json); set RPC_COMPAT_DIR');
  }
  return dir;
}

const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * Every `.io` file below `root`, as Go's filepath.Walk visits them: each directory's entries
 * sorted by name (byte order), directories entered where they sort.
 */
export function walkIoFiles(root: string): string[] {
  const out: string[] = [];
  const visit = (rel: string): void => {
    for (const name of readdirSync(join(root, rel)).sort(byBytes)) {
      const child = rel === '' ? name : `${rel}/${name}`;
      if (statSync(join(root, child)).isDirectory()) visit(child);
      else if (name.endsWith('.io')) out.push(child);
    }
  };
  visit('');
  return out;
}

/** Parses one `.io` file. `name` is its path below tests/. Throws FixtureError. */
export function parseFixture(name: string, text: string): Fixture {
  const slash = name.lastIndexOf('/');
  const fixture: Fixture = { name, method: slash === -1 ? '' : name.slice(0, slash), description: [], speconly: false, exchanges: [] };
  let pending: { body: string; line: number } | null = null;
  const lines = text.split(/\r?\n/);
  for (let n = 1; n <= lines.length; n++) {
    const line = lines[n - 1]!.trim();
    if (line === '') continue;
    if (line.startsWith('//')) {
      if (fixture.exchanges.length > 0 || pending !== null) continue; // only header comments count
      const comment = line.slice(2).replace(/^ /, '');
      fixture.description.push(comment);
      if (comment.startsWith('speconly:')) fixture.speconly = true;
    } else if (line.startsWith('>>')) {
      if (pending !== null) throw new FixtureError(name, n, `request without a response (the request on line ${pending.line} has no "<<" line)`);
      const body = line.slice(2).trim();
      const request = parseAt(name, n, body, 'request');
      if (!isObject(request)) throw new FixtureError(name, n, 'the request is not a JSON object (batches are not used by the suite)');
      pending = { body, line: n };
    } else if (line.startsWith('<<')) {
      if (pending === null) throw new FixtureError(name, n, 'response without a request before it');
      const expected = parseAt(name, n, line.slice(2).trim(), 'response');
      fixture.exchanges.push({ request: pending.body, expected, requestLine: pending.line, responseLine: n });
      pending = null;
    } else {
      throw new FixtureError(name, n, `invalid line (not a comment, ">>" or "<<"): ${line.slice(0, 80)}`);
    }
  }
  if (pending !== null) throw new FixtureError(name, pending.line, 'request without a response at the end of the file');
  if (fixture.exchanges.length === 0) throw new FixtureError(name, lines.length, 'no request in the file');
  return fixture;
}

function parseAt(file: string, line: number, body: string, what: string): Json {
  try {
    return parseJson(body);
  } catch (e) {
    if (e instanceof JsonSyntaxError) throw new FixtureError(file, line, `invalid JSON ${what}: ${e.message}`);
    throw e;
  }
}

/** Loads every fixture of the kit in replay order. */
export function loadFixtures(kit: string): Fixture[] {
  const tests = join(kit, 'tests');
  return walkIoFiles(tests).map((name) => parseFixture(name, readFileSync(join(tests, name), 'utf8')));
}
