// The test methods as the clients that call them use them: one viem test-client script run
// against anvil and against this node must observe the same things; dumps cross between
// the two; and Foundry's flow (cast rpc anvil_setBalance, then cast send --unlocked from an
// impersonated address) works.
//
// The script reads `pending` after each edit: on this node an edit is shown at once as the
// block's next pre-confirmation and reaches `latest` when the block is sealed (on anvil,
// which has no pre-confirmations, `pending` reads the same state as `latest`).

import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createTestClient, createWalletClient, http, pad, parseEther, toHex, type Address, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { cast } from '../helpers/foundry.js';
import { devAccount, startTestNode, type TestNode } from '../helpers/node.js';

const ALICE = '0x00000000000000000000000000000000000a11ce' as Address;
const CODE_AT = '0x000000000000000000000000000000000000c0de' as Address;
const WHALE = '0x0000000000000000000000000000000000077a1e' as Address;
/** PUSH1 1 PUSH1 0 SSTORE STOP: a runtime, as setCode installs it. */
const RUNTIME = '0x6001600055' as Hex;

function clients(url: string) {
  const chain = { ...foundry, rpcUrls: { default: { http: [url] } } };
  const transport = http(url, { retryCount: 0 });
  return {
    test: createTestClient({ mode: 'anvil', chain, transport }),
    pub: createPublicClient({ chain, transport, pollingInterval: 50 }),
    wallet: createWalletClient({ chain, transport }),
  };
}

/** Everything the script observes, as plain values to compare across nodes. */
async function script(url: string): Promise<Record<string, unknown>> {
  const { test, pub, wallet } = clients(url);
  const seen: Record<string, unknown> = {};
  const balance = (address: Address) => pub.getBalance({ address, blockTag: 'pending' });

  await test.setBalance({ address: ALICE, value: parseEther('7') });
  seen.setBalance = await balance(ALICE);
  await test.setCode({ address: CODE_AT, bytecode: RUNTIME });
  seen.setCode = await pub.getCode({ address: CODE_AT, blockTag: 'pending' });
  await test.setStorageAt({ address: CODE_AT, index: 3, value: pad('0x2a') });
  seen.setStorageAt = await pub.getStorageAt({ address: CODE_AT, slot: toHex(3), blockTag: 'pending' });
  await test.setNonce({ address: ALICE, nonce: 5 });
  seen.setNonce = await pub.getTransactionCount({ address: ALICE, blockTag: 'pending' });

  // Impersonation: eth_sendTransaction from an address whose key nobody has.
  await test.impersonateAccount({ address: WHALE });
  await test.setBalance({ address: WHALE, value: parseEther('1') });
  const hash = await wallet.sendTransaction({ account: WHALE, to: ALICE, value: 1000n, chain: null });
  const receipt = await pub.waitForTransactionReceipt({ hash, timeout: 20_000 });
  seen.impersonated = { status: receipt.status, from: receipt.from, to: receipt.to };
  seen.afterTransfer = await balance(ALICE);
  await test.stopImpersonatingAccount({ address: WHALE });
  seen.afterStop = await wallet.sendTransaction({ account: WHALE, to: ALICE, value: 1n, chain: null }).then(
    () => 'sent',
    () => 'refused',
  );

  // Mining on demand, with an interval between the blocks' timestamps.
  const before = await pub.getBlockNumber();
  await test.mine({ blocks: 3, interval: 10 });
  const latest = await pub.getBlock();
  const parent = await pub.getBlock({ blockNumber: latest.number - 1n });
  seen.mined = { atLeastThree: latest.number - before >= 3n, spacing: latest.timestamp - parent.timestamp };

  // Time.
  const t0 = (await pub.getBlock()).timestamp;
  await test.increaseTime({ seconds: 3600 });
  await test.mine({ blocks: 1 });
  seen.timeJumped = (await pub.getBlock()).timestamp - t0 >= 3600n;

  // Snapshot, changes (an edit and a transaction), revert.
  const id = await test.snapshot();
  await test.setBalance({ address: ALICE, value: 1n });
  const sender = devAccount(0);
  const tx = await createWalletClient({ chain: clients(url).pub.chain, transport: http(url), account: sender }).sendTransaction({ to: ALICE, value: 5n });
  await pub.waitForTransactionReceipt({ hash: tx, timeout: 20_000 });
  seen.changed = await balance(ALICE);
  await test.revert({ id });
  seen.reverted = await balance(ALICE);
  seen.senderNonceAfterRevert = await pub.getTransactionCount({ address: sender.address, blockTag: 'pending' });
  seen.revertedTx = await pub.getTransactionReceipt({ hash: tx }).then(
    () => 'still there',
    () => 'gone',
  );
  seen.revertAgain = await test.request({ method: 'evm_revert', params: [id] });

  // Dump, lose, load back.
  const dump = await test.dumpState();
  const state = JSON.parse(gunzipSync(Buffer.from(dump.slice(2), 'hex')).toString()) as {
    accounts: Record<string, { balance: string; nonce: number; code: string; storage: Record<string, string> }>;
  };
  const alice = state.accounts[ALICE.toLowerCase()] ?? state.accounts[ALICE];
  const code = state.accounts[CODE_AT.toLowerCase()] ?? state.accounts[CODE_AT];
  seen.dumped = { balance: BigInt(alice!.balance), nonce: alice!.nonce, code: code!.code, slot3: BigInt(code!.storage[pad('0x3')]!) };
  await test.setBalance({ address: ALICE, value: 0n });
  await test.setStorageAt({ address: CODE_AT, index: 3, value: pad('0x0') });
  await test.loadState({ state: dump });
  seen.loaded = {
    balance: await balance(ALICE),
    slot3: await pub.getStorageAt({ address: CODE_AT, slot: toHex(3), blockTag: 'pending' }),
  };
  return seen;
}

describe('the test methods with the clients that call them', () => {
  let anvil: Anvil;
  let t: TestNode;
  beforeAll(async () => {
    anvil = await startAnvil();
    t = await startTestNode({ configure: (c) => void ((c.chain.preconfIntervalMs = 50), (c.chain.blockTimeMs = 500)) });
  });
  afterAll(async () => {
    await t?.stop();
    await anvil?.stop();
  });

  it("viem's test actions observe the same on this node as on anvil", async () => {
    const onAnvil = await script(anvil.url);
    const onNode = await script(t.node.url);
    expect(onNode).toEqual(onAnvil);
    // And what both observed is what the script did.
    expect(onNode).toMatchObject({
      setBalance: parseEther('7'),
      setCode: RUNTIME,
      setStorageAt: pad('0x2a'),
      setNonce: 5,
      impersonated: { status: 'success', from: WHALE.toLowerCase(), to: ALICE.toLowerCase() },
      afterTransfer: parseEther('7') + 1000n,
      afterStop: 'refused',
      mined: { atLeastThree: true, spacing: 10n },
      timeJumped: true,
      changed: 6n,
      reverted: parseEther('7') + 1000n,
      revertedTx: 'gone',
      revertAgain: false,
      dumped: { balance: parseEther('7') + 1000n, nonce: 5, code: RUNTIME, slot3: 42n },
      loaded: { balance: parseEther('7') + 1000n, slot3: pad('0x2a') },
    });
  });

  it("viem's block settings (coinbase, gas limit, timestamp interval) give the same blocks here as on anvil", async () => {
    const settings = async (url: string): Promise<Record<string, unknown>> => {
      const { test, pub } = clients(url);
      const seen: Record<string, unknown> = {};
      const COINBASE = '0x00000000000000000000000000000000000c0b0b' as Address;
      await test.setCoinbase({ address: COINBASE });
      await test.setBlockGasLimit({ gasLimit: 50_000_000n });
      await test.setBlockTimestampInterval({ interval: 7 });
      await test.mine({ blocks: 2 });
      const latest = await pub.getBlock();
      const parent = await pub.getBlock({ blockNumber: latest.number - 1n });
      seen.blocks = [parent, latest].map((b) => ({ miner: b.miner, gasLimit: b.gasLimit }));
      seen.spacing = latest.timestamp - parent.timestamp;
      seen.removed = await test.request({ method: 'anvil_removeBlockTimestampInterval' });
      seen.removedAgain = await test.request({ method: 'anvil_removeBlockTimestampInterval' });
      seen.tooLow = await test.request({ method: 'evm_setBlockGasLimit', params: ['0x1'] }).then(
        () => 'accepted',
        () => 'refused',
      );
      return seen;
    };
    const onAnvil = await settings(anvil.url);
    const onNode = await settings(t.node.url);
    expect(onNode).toMatchObject({
      blocks: [
        { miner: '0x00000000000000000000000000000000000c0b0b', gasLimit: 50_000_000n },
        { miner: '0x00000000000000000000000000000000000c0b0b', gasLimit: 50_000_000n },
      ],
      spacing: 7n,
      removed: true,
      removedAgain: false,
      tooLow: 'refused',
    });
    const { tooLow: _anvilTooLow, ...anvilRest } = onAnvil;
    const { tooLow: _nodeTooLow, ...nodeRest } = onNode;
    expect(nodeRest).toEqual(anvilRest);
  });

  it("loads anvil's dumps, and anvil loads this node's", async () => {
    const fromAnvil = clients(anvil.url);
    const fromNode = clients(t.node.url);
    const a = '0x00000000000000000000000000000000000aaaaa' as Address;
    const n = '0x00000000000000000000000000000000000bbbbb' as Address;
    await fromAnvil.test.setBalance({ address: a, value: 1234n });
    await fromAnvil.test.setStorageAt({ address: a, index: 1, value: pad('0x07') });
    await fromNode.test.loadState({ state: await fromAnvil.test.dumpState() });
    expect(await fromNode.pub.getBalance({ address: a, blockTag: 'pending' })).toBe(1234n);
    expect(await fromNode.pub.getStorageAt({ address: a, slot: toHex(1), blockTag: 'pending' })).toBe(pad('0x07'));

    await fromNode.test.setBalance({ address: n, value: 5678n });
    await fromNode.test.setCode({ address: n, bytecode: RUNTIME });
    await fromAnvil.test.loadState({ state: await fromNode.test.dumpState() });
    expect(await fromAnvil.pub.getBalance({ address: n })).toBe(5678n);
    expect(await fromAnvil.pub.getCode({ address: n })).toBe(RUNTIME);
  });

  it('serves the Foundry flow: cast rpc anvil_setBalance, then cast send --unlocked from an impersonated address', async () => {
    const url = t.node.url;
    const from = '0x00000000000000000000000000000000000f0f0f';
    const to = '0x00000000000000000000000000000000000e0e0e';
    const funded = await cast(['rpc', '--rpc-url', url, 'anvil_setBalance', from, '0xde0b6b3a7640000']);
    expect(funded.code, funded.stderr).toBe(0);
    expect((await cast(['balance', '--rpc-url', url, '--block', 'pending', from])).stdout.trim()).toBe('1000000000000000000');
    // Without impersonation the node holds no key for it.
    const refused = await cast(['send', '--rpc-url', url, '--unlocked', '--from', from, to, '--value', '1234']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('unknown account');
    expect((await cast(['rpc', '--rpc-url', url, 'anvil_impersonateAccount', from])).code).toBe(0);
    const sent = await cast(['send', '--rpc-url', url, '--unlocked', '--from', from, to, '--value', '1234', '--json']);
    expect(sent.code, sent.stderr).toBe(0);
    const receipt = JSON.parse(sent.stdout) as { status: string; from: string };
    expect(receipt.status).toBe('0x1');
    expect(receipt.from.toLowerCase()).toBe(from);
    // cast waited for the receipt, so `latest` already holds the transfer.
    expect((await cast(['balance', '--rpc-url', url, to])).stdout.trim()).toBe('1234');
  });
});
