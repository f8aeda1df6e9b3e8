// forge against a forked node, as a user runs it: `forge script --fork-url` simulates on
// the fork (reading the sender's nonce and balance the node fetched from the upstream),
// broadcasts, and every transaction lands here while the upstream (anvil on loopback)
// stays as it was.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getContractAddress, type Address } from 'viem';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { cast, ForgeProject, ok } from '../helpers/foundry.js';
import { DEV_KEYS, devAccount, rpc, startTestNode, type TestNode } from '../helpers/node.js';

const SCRIPT = 'Deploy.s.sol';
const deployer = devAccount(3).address;

let anvil: Anvil;
let t: TestNode;
let project: ForgeProject;

beforeAll(async () => {
  anvil = await startAnvil();
  // One transaction upstream before the fork: the deployer's nonce there is 1, so where
  // the script's contract lands on the fork depends on the upstream's state.
  const sent = await cast(['send', '--private-key', DEV_KEYS[3]!, '--rpc-url', anvil.url, deployer, '--value', '1']);
  ok(sent, 'cast send upstream');
  t = await startTestNode({
    configure: (cfg) => {
      cfg.chain.forkUrl = anvil.url;
      cfg.chain.blockTimeMs = 200;
    },
  });
  project = new ForgeProject();
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await anvil?.stop();
  project?.remove();
});

describe('forge on a fork', () => {
  it('forge script --fork-url simulates on the fork and broadcasts to it; the upstream is unchanged', async () => {
    const url = t.node.url;
    expect((await rpc(url, 'eth_getTransactionCount', [deployer, 'latest'])).result).toBe('0x1');
    ok(await project.forge(['script', `script/${SCRIPT}:Deploy`, '--fork-url', url, '--broadcast'], { DEPLOYER_KEY: DEV_KEYS[3]! }), 'forge script');
    const run = project.lastBroadcast(SCRIPT, 31337);
    expect(run.receipts.map((r) => r.status)).toEqual(['0x1', '0x1', '0x1']);
    const counter = (run.transactions[0] as { contractAddress: Address }).contractAddress;
    expect(counter.toLowerCase()).toBe(getContractAddress({ from: deployer, nonce: 1n }).toLowerCase());
    // Deployed at 40, incremented twice, on the fork only.
    expect(ok(await cast(['call', counter, 'number()(uint256)', '--rpc-url', url]), 'cast call').trim()).toBe('42');
    expect((await rpc(url, 'eth_getTransactionCount', [deployer, 'latest'])).result).toBe('0x4');
    expect((await rpc(anvil.url, 'eth_getCode', [counter, 'latest'])).result).toBe('0x');
    expect((await rpc(anvil.url, 'eth_getTransactionCount', [deployer, 'latest'])).result).toBe('0x1');
  }, 120_000);
});
