// Runs one blockchain test through `preconf-node import`'s path (the addon's importChain):
// the genesis from `genesisBlockHeader` and `pre`, the blocks from their `rlp`, valid runs
// of blocks in one file each and every block marked `expectException` alone, so a refused
// block leaves the chain where it was. Then the head must be `lastblockhash` and the stored
// state must hold `postState` (read back through the node, as `--no-build` serves it).

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fromRlp, keccak256, toRlp, type Hex } from 'viem';
import { Chain, importChain, type ImportFailure, type ImportResult } from '../../src/native.js';
import type { BlockchainTest, FixtureAccount, TestCase } from './fixtures.js';
import { genesisConfig, UnsupportedNetwork } from './networks.js';

export type Status = 'pass' | 'fail' | 'skip';

export interface Outcome {
  status: Status;
  /** Why it failed or was skipped (one line). */
  reason?: string;
  /** The refusal message of each expected-invalid block, in order. */
  refusals: string[];
}

/** A skip whose reason is one of a few fixed texts, so a report can count them. */
export const SKIP_SIDE_CHAIN = 'needs a side chain or a reorg (import is linear)';

const quantity = (v: string | undefined): bigint => (v === undefined || v === '0x' || v === '' ? 0n : BigInt(v));

interface DecodedBlock {
  index: number;
  rlp: Hex;
  expectException?: string;
  /** Absent when the RLP does not decode as a block (an invalid block may be malformed). */
  header?: { hash: Hex; parentHash: Hex; number: number };
}

function decode(index: number, rlp: Hex, expectException?: string): DecodedBlock {
  try {
    const block = fromRlp(rlp, 'hex');
    const header = Array.isArray(block) ? block[0] : undefined;
    if (!Array.isArray(header) || typeof header[0] !== 'string' || typeof header[8] !== 'string') {
      return { index, rlp, expectException };
    }
    const number = header[8] === '0x' ? 0 : Number(BigInt(header[8]));
    return { index, rlp, expectException, header: { hash: keccak256(toRlp(header)), parentHash: header[0] as Hex, number } };
  } catch {
    return { index, rlp, expectException };
  }
}

/** A 32-byte hex word, as genesis.json storage keys and values are written. */
const word = (v: string): string => `0x${quantity(v).toString(16).padStart(64, '0')}`;

/** The genesis.json the fixture describes. */
export function genesisJson(t: BlockchainTest): object {
  const h = t.genesisBlockHeader;
  const alloc: Record<string, object> = {};
  for (const [address, a] of Object.entries(t.pre)) {
    const storage: Record<string, string> = {};
    for (const [slot, value] of Object.entries(a.storage)) storage[word(slot)] = word(value);
    alloc[address] = { balance: a.balance, nonce: a.nonce, code: a.code, storage };
  }
  const optional = (key: string, value: string | undefined): object => (value === undefined ? {} : { [key]: value });
  return {
    config: genesisConfig(t.network, Number(t.config?.chainid ?? 1), t.config?.blobSchedule),
    nonce: h.nonce,
    timestamp: h.timestamp,
    extraData: h.extraData,
    gasLimit: h.gasLimit,
    difficulty: h.difficulty,
    mixHash: h.mixHash,
    coinbase: h.coinbase,
    number: h.number,
    parentHash: h.parentHash,
    ...optional('baseFeePerGas', h.baseFeePerGas),
    ...optional('excessBlobGas', h.excessBlobGas),
    ...optional('blobGasUsed', h.blobGasUsed),
    alloc,
  };
}

/**
 * Splits the blocks into the linear chain import can follow. A block whose parent is a
 * known block other than the current head (a side chain, a reorg) makes the test a skip;
 * an invalid block with an unknown parent is still tried (it must be refused).
 */
function linearPlan(t: BlockchainTest, blocks: DecodedBlock[]): { skip?: string; head: string } {
  const genesis = t.genesisBlockHeader.hash!.toLowerCase();
  const known = new Set([genesis]);
  let head = genesis;
  for (const b of blocks) {
    if (!b.header) continue;
    const parent = b.header.parentHash.toLowerCase();
    if (parent !== head && known.has(parent)) return { skip: SKIP_SIDE_CHAIN, head };
    if (b.expectException === undefined) {
      head = b.header.hash.toLowerCase();
      known.add(head);
    }
  }
  if (t.lastblockhash.toLowerCase() !== head && known.has(t.lastblockhash.toLowerCase())) return { skip: SKIP_SIDE_CHAIN, head };
  return { head };
}

const isFailure = (r: ImportResult | ImportFailure): r is ImportFailure => 'message' in r;

/** The first difference between an account of `postState` and what the node stores. */
function accountDiff(chain: Chain, address: string, want: FixtureAccount): string | undefined {
  // A chain without a fork upstream answers state reads at once, never with a promise.
  const read = (json: string | Promise<string>): string => {
    if (typeof json !== 'string') throw new Error('a local chain answered a state read with a promise');
    return JSON.parse(json) as string;
  };
  const balance = read(chain.getBalance(address, 'latest'));
  if (quantity(balance) !== quantity(want.balance)) return `balance of ${address}: fixture has ${want.balance}, node has ${balance}`;
  const nonce = read(chain.getTransactionCount(address, 'latest'));
  if (quantity(nonce) !== quantity(want.nonce)) return `nonce of ${address}: fixture has ${want.nonce}, node has ${nonce}`;
  const code = read(chain.getCode(address, 'latest'));
  if (code.toLowerCase() !== (want.code || '0x').toLowerCase())
    return `code of ${address} differs (${(want.code.length - 2) / 2} bytes in the fixture, ${(code.length - 2) / 2} stored)`;
  for (const [slot, value] of Object.entries(want.storage)) {
    const stored = read(chain.getStorageAt(address, word(slot), 'latest'));
    if (quantity(stored) !== quantity(value)) return `storage ${slot} of ${address}: fixture has ${value}, node has ${stored}`;
  }
  return undefined;
}

/** Reads the imported chain back: `postState` account by account, or `postStateHash`. */
function checkPostState(datadir: string, t: BlockchainTest): string | undefined {
  const chain = Chain.open({ datadir, build: false });
  try {
    if (t.postState) {
      for (const [address, want] of Object.entries(t.postState)) {
        const diff = accountDiff(chain, address, want);
        if (diff) return `postState: ${diff}`;
      }
    }
    if (t.postStateHash) {
      const root = (JSON.parse(chain.getBlock('latest', false) as string) as { stateRoot: string }).stateRoot;
      if (root.toLowerCase() !== t.postStateHash.toLowerCase()) return `postStateHash: fixture has ${t.postStateHash}, head's stateRoot is ${root}`;
    }
    return undefined;
  } finally {
    chain.close();
  }
}

/** Runs one test in `dir` (created, and removed afterwards). */
export async function runTest(tc: TestCase, dir: string): Promise<Outcome> {
  const t = tc.test;
  const refusals: string[] = [];
  const fail = (reason: string): Outcome => ({ status: 'fail', reason, refusals });
  let genesis: object;
  try {
    genesis = genesisJson(t);
  } catch (e) {
    if (e instanceof UnsupportedNetwork) return { status: 'skip', reason: e.message, refusals };
    throw e;
  }
  const blocks = t.blocks.map((b, i) => decode(i, b.rlp as Hex, b.expectException));
  const plan = linearPlan(t, blocks);
  if (plan.skip) return { status: 'skip', reason: plan.skip, refusals };

  mkdirSync(dir, { recursive: true });
  try {
    const datadir = join(dir, 'data');
    const genesisFile = join(dir, 'genesis.json');
    writeFileSync(genesisFile, JSON.stringify(genesis));
    let file = 0;
    const importBlocks = (rlps: Hex[]): Promise<ImportResult | ImportFailure> => {
      const blocksFile = join(dir, `blocks-${file++}.rlp`);
      writeFileSync(blocksFile, Buffer.concat(rlps.map((r) => Buffer.from(r.slice(2), 'hex'))));
      return importChain({ datadir, genesisFile, blocksFile, progressIntervalMs: 3_600_000 });
    };

    const seeded = await importBlocks([]);
    if (isFailure(seeded)) return fail(`genesis: ${seeded.message}`);
    const wantGenesis = t.genesisBlockHeader.hash!.toLowerCase();
    if (seeded.genesisHash.toLowerCase() !== wantGenesis) {
      return fail(`genesis hash: fixture has ${wantGenesis}, node builds ${seeded.genesisHash}`);
    }
    let headHash = seeded.headHash.toLowerCase();
    let run: DecodedBlock[] = [];
    const flush = async (): Promise<string | undefined> => {
      if (run.length === 0) return undefined;
      const r = await importBlocks(run.map((b) => b.rlp));
      run = [];
      if (isFailure(r)) return `refused a valid block: ${r.message}`;
      headHash = r.headHash.toLowerCase();
      return undefined;
    };
    for (const b of blocks) {
      if (b.expectException === undefined) {
        run.push(b);
        continue;
      }
      const refused = await flush();
      if (refused) return fail(refused);
      const r = await importBlocks([b.rlp]);
      if (!isFailure(r)) {
        return fail(`block ${b.header?.number ?? `#${b.index + 1}`} was imported; the fixture expects ${b.expectException}`);
      }
      refusals.push(r.message);
    }
    const refused = await flush();
    if (refused) return fail(refused);
    if (headHash !== t.lastblockhash.toLowerCase()) return fail(`lastblockhash: fixture has ${t.lastblockhash}, head is ${headHash}`);
    const post = checkPostState(datadir, t);
    return post ? fail(post) : { status: 'pass', refusals };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
