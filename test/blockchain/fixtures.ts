// Blockchain-test fixtures of both formats (execution-spec-tests' `blockchain_test` and
// ethereum/tests' legacy BlockchainTests): a JSON file maps test names to a genesis header,
// a pre-state, RLP blocks (some marked with `expectException`) and the expected result.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import type { FixtureBlobSchedule } from './networks.js';

export interface FixtureAccount {
  balance: string;
  nonce: string;
  code: string;
  storage: Record<string, string>;
}

export interface FixtureBlock {
  rlp: string;
  /** The block must be refused (a rule it breaks, in the filler's words). */
  expectException?: string;
  blockHeader?: { hash?: string };
}

export interface BlockchainTest {
  network: string;
  genesisBlockHeader: Record<string, string>;
  pre: Record<string, FixtureAccount>;
  postState?: Record<string, FixtureAccount>;
  postStateHash?: string;
  lastblockhash: string;
  blocks: FixtureBlock[];
  sealEngine?: string;
  config?: { network?: string; chainid?: string; blobSchedule?: FixtureBlobSchedule };
}

/** One test of a fixture file, with where it came from. */
export interface TestCase {
  file: string;
  name: string;
  /** The fixture folder the test is reported under (its last two directories). */
  category: string;
  test: BlockchainTest;
}

/** Every `.json` file under the given files or directories, sorted. */
export function fixtureFiles(paths: string[]): string[] {
  const out: string[] = [];
  const walk = (p: string): void => {
    const st = statSync(p);
    if (st.isDirectory()) {
      for (const e of readdirSync(p).sort()) walk(join(p, e));
    } else if (p.endsWith('.json')) out.push(p);
  };
  for (const p of paths) walk(resolve(p));
  return out;
}

/** The last two directories of a fixture's path: `cancun/eip4844_blobs`, `InvalidBlocks/bcUncleTest`. */
export function categoryOf(file: string, root?: string): string {
  const dir = root ? relative(root, dirname(file)) : dirname(file);
  const parts = dir.split(sep).filter((p) => p !== '' && p !== '.' && p !== '..');
  return parts.slice(-2).join('/') || basename(dirname(file));
}

const isBlockchainTest = (t: unknown): t is BlockchainTest =>
  typeof t === 'object' && t !== null && 'genesisBlockHeader' in t && 'blocks' in t && 'network' in t;

/** The tests of one file; engine-format and state-test files hold none. */
export function loadTests(file: string): TestCase[] {
  const json = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  const category = categoryOf(file);
  return Object.entries(json)
    .filter((e): e is [string, BlockchainTest] => isBlockchainTest(e[1]))
    .map(([name, test]) => ({ file, name, category, test }));
}
