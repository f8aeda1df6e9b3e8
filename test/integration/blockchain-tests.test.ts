// The Ethereum blockchain-test regression set (test/fixtures/blockchain, docs/compat.md) run
// through the import path as `npm run blockchain-tests` runs it: held to its floor, every test
// passing, the examples of the rules the import once missed (uncles, the DAO fork, system
// calls out of gas, blobs in a block, EIP-7610) refused for the rule they break (not merely
// for a state root that happens to differ), and a tampered fixture failing, so the runner
// itself can fail.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestCase } from '../blockchain/fixtures.js';
import { loadFloor, REGRESSION_DIR, summarize, type Result } from '../blockchain/report.js';
import { runTest } from '../blockchain/run.js';
import { collectTests, runSuite } from '../blockchain/suite.js';

const tests = collectTests([REGRESSION_DIR]);
let results: Result[] = [];

const named = (fragment: string): Result[] => results.filter((r) => r.test.name.includes(fragment));

describe('blockchain tests: the regression set', () => {
  beforeAll(async () => {
    results = await runSuite(tests, { jobs: 2 });
  }, 180_000);

  it('passes every test, at or above the floor', () => {
    const s = summarize(results);
    const failures = s.failures.map((f) => `${f.test.name}: ${f.outcome.reason}`);
    expect(failures).toEqual([]);
    expect(s.total.pass).toBeGreaterThanOrEqual(loadFloor());
    // The set spans the forks from Frontier to Osaka, transitions included.
    for (const fork of ['Frontier', 'Homestead', 'Byzantium', 'Istanbul', 'London', 'Paris', 'Shanghai', 'Cancun', 'Prague', 'Osaka', 'HomesteadToDaoAt5']) {
      expect(s.byFork.get(fork)?.pass ?? 0, fork).toBeGreaterThan(0);
    }
  });

  it('refuses an uncle whose gas limit leaves its parent’s bound (gasLimitTooLowExactBound)', () => {
    const [london] = named('gasLimitTooLowExactBound_London');
    expect(london?.outcome.status).toBe('pass');
    expect(london!.outcome.refusals).toEqual([expect.stringMatching(/^block 3: invalid gasLimit: uncle 0 has \d+, the rules require \d+\.\.=\d+$/)]);
  });

  it('applies the DAO fork: refund at the fork block, dao-hard-fork extra data for ten blocks', () => {
    const [dao] = named('DaoTransactions_EmptyTransactionAndForkBlocksAhead');
    expect(dao?.outcome.status, dao?.outcome.reason).toBe('pass');
    expect(dao!.outcome.refusals.length).toBe(3);
    for (const m of dao!.outcome.refusals) expect(m).toMatch(/invalid extraData: header has 0x[0-9a-f]*, the rules require "dao-hard-fork"/);
  });

  it('gives system calls 30M gas: an out-of-gas request contract fails the block', () => {
    const oog = named('system_contract_out_of_gas');
    expect(oog.length).toBeGreaterThanOrEqual(2);
    for (const r of oog) {
      expect(r.outcome.status).toBe('pass');
      expect(r.outcome.refusals).toEqual([
        expect.stringMatching(/system call to 0x[0-9a-fA-F]{40} failed: Halt \{ reason: OutOfGas.*total_gas_spent: 30000000\b/),
      ]);
    }
  });

  it('refuses a block holding a blob transaction in its network form', () => {
    const full = named('test_reject_valid_full_blob_in_block_rlp');
    expect(new Set(full.map((r) => r.test.test.network))).toEqual(new Set(['Cancun', 'Prague', 'Osaka']));
    for (const r of full) {
      expect(r.outcome.status).toBe('pass');
      expect(r.outcome.refusals).toEqual([expect.stringMatching(/invalid transactions: transaction \d+ has its blob sidecar/)]);
    }
  });

  it('collides a creation with an address that only has storage (EIP-7610)', () => {
    const [tx] = named('fork_Prague-tx_type_0-blockchain_test_from_state_test-non-empty-balance-revert-initcode');
    expect(tx?.outcome.status, tx?.outcome.reason).toBe('pass');
    const opcodes = named('test_init_collision_create_opcode');
    expect(opcodes.length).toBeGreaterThanOrEqual(2);
    for (const r of opcodes) expect(r.outcome.status, r.outcome.reason).toBe('pass');
  });
});

describe('blockchain tests: the runner', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bt-runner-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const tamper = (name: string, change: (t: TestCase['test']) => void): TestCase => {
    const tc = tests.find((t) => t.name.includes(name))!;
    const copy = structuredClone(tc);
    change(copy.test);
    return copy;
  };

  it('fails a test whose postState differs from what the node stored', async () => {
    const tc = tamper('fork_Prague-tx_type_0-blockchain_test_from_state_test-non-empty-balance-revert-initcode', (t) => {
      const [address, account] = Object.entries(t.postState!)[0]!;
      t.postState![address] = { ...account, balance: `0x${(BigInt(account.balance) + 1n).toString(16)}` };
    });
    const out = await runTest(tc, join(dir, 'post'));
    expect(out.status).toBe('fail');
    expect(out.reason).toMatch(/^postState: balance of 0x[0-9a-f]{40}: fixture has 0x[0-9a-f]+, node has 0x[0-9a-f]+$/);
  });

  it('fails a test whose head is not lastblockhash, and skips side chains', async () => {
    const imported = tamper('gasLimitTooLowExactBound_London', (t) => {
      t.blocks = t.blocks.slice(0, 2);
      t.lastblockhash = '0x' + '00'.repeat(32);
    });
    const out = await runTest(imported, join(dir, 'last'));
    expect(out).toMatchObject({ status: 'fail', reason: expect.stringMatching(/^lastblockhash: fixture has 0x0{64}, head is 0x[0-9a-f]{64}$/) });
    const sideChain = tamper('gasLimitTooLowExactBound_London', (t) => {
      t.blocks = [t.blocks[0]!, t.blocks[1]!, t.blocks[1]!];
    });
    expect((await runTest(sideChain, join(dir, 'side'))).status).toBe('skip');
  });
});
