// On a node op-node drives (the OP dev chain with the Engine API on), every block and its
// state come from payload attributes: the test methods that would seal a block, move its
// clock, edit its state or send a transaction without a valid signature are refused (a block
// they changed would be refused by every node verifying it), while the ones that only read
// or drop pool transactions still work. The node's head does not move.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/cli/index.js';
import { rpc, startTestNode, type TestNode } from '../helpers/node.js';

const SOMEONE = '0x000000000000000000000000000000000000bEEF';
const REFUSED = 'blocks on this node come from the Engine API (op-node)';

describe('test methods on an engine-driven node', () => {
  let dir: string;
  let t: TestNode;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'preconf-engine-dev-'));
    const flags = parseArgs(['--optimism', '--authrpc.port', '0', '--authrpc.jwtsecret', join(dir, 'jwt.hex')]);
    if (flags === 'help') throw new Error('help');
    t = await startTestNode({
      configure: (c) => {
        Object.assign(c.chain, { ...flags.chain, datadir: undefined });
        c.engine = { ...flags.engine!, port: 0 };
      },
    });
  });
  afterAll(async () => {
    await t?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['evm_mine', []],
    ['anvil_mine', ['0x2']],
    ['evm_increaseTime', [60]],
    ['evm_setNextBlockTimestamp', [4_000_000_000]],
    ['anvil_setBalance', [SOMEONE, '0x1']],
    ['anvil_setCode', [SOMEONE, '0x00']],
    ['anvil_setStorageAt', [SOMEONE, '0x0', `0x${'11'.repeat(32)}`]],
    ['evm_snapshot', []],
    ['anvil_reset', []],
    ['evm_setAutomine', [true]],
    ['anvil_setCoinbase', [SOMEONE]],
    ['anvil_impersonateAccount', [SOMEONE]],
    ['anvil_autoImpersonateAccount', [true]],
  ])('refuses %s', async (method, params) => {
    const answer = await rpc(t.node.url, method, params);
    expect(answer.error?.message ?? '').toContain(REFUSED);
    expect(answer.error?.code).toBe(-32000);
  });

  it('still serves the methods that only read or drop pool transactions, and the head has not moved', async () => {
    for (const [method, params] of [
      ['anvil_metadata', []],
      ['anvil_getAutomine', []],
      ['anvil_dropAllTransactions', []],
      ['anvil_stopImpersonatingAccount', [SOMEONE]],
    ] as const) {
      const answer = await rpc(t.node.url, method, [...params]);
      expect(answer.error, method).toBeUndefined();
    }
    const latest = (await rpc(t.node.url, 'eth_blockNumber', [])).result;
    expect(latest).toBe('0x0');
  });
});
