// Fork mode against a real upstream on loopback: anvil holding an ERC-20 and a contract
// that reads many slots, behind a counting proxy (its own process). The forked node must
// answer as the upstream at the fork block, keep its own writes local, batch its cold
// reads, and after a restart on the same datadir read its cache instead of the upstream.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, http, type Address, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { contract } from '../helpers/contracts.js';
import { cast, ok } from '../helpers/foundry.js';
import { devAccount, rpc } from '../helpers/node.js';
import { spawnNode, type NodeProcess } from '../helpers/process.js';
import { startUpstreamProxy, type UpstreamProxy } from '../helpers/upstream-proxy.js';

const erc20 = contract('Erc20');
const slots = contract('Slots');
const holder = devAccount(0).address;
const other = devAccount(1).address;
const stranger = '0x00000000000000000000000000000000000a11ce' as Address;
const DEV_BALANCE = 10_000n * 10n ** 18n;

let anvil: Anvil;
let proxy: UpstreamProxy;
let token: Address;
let reader: Address;
let forkBlock: bigint;
let datadir: string;

const upstreamClient = () => createPublicClient({ chain: foundry, transport: http(anvil.url) });

// The real command, so that a restart reopens the store a stopped process released.
async function forkNode(): Promise<{ url: string; pub: ReturnType<typeof upstreamClient>; proc: NodeProcess }> {
  return forkNodeAt(datadir);
}

async function forkNodeAt(dir: string): Promise<{ url: string; pub: ReturnType<typeof upstreamClient>; proc: NodeProcess }> {
  const args = ['--fork-url', proxy.url, '--fork-block-number', String(forkBlock), '--datadir', dir];
  const proc = await spawnNode([...args, '--preconf-interval-ms', '50', '--block-time-ms', '200']);
  return { url: proc.url, proc, pub: createPublicClient({ chain: foundry, transport: http(proc.url), pollingInterval: 50 }) };
}

beforeAll(async () => {
  anvil = await startAnvil();
  const wallet = createWalletClient({ chain: foundry, transport: http(anvil.url), account: devAccount(0) });
  const pub = upstreamClient();
  const t = await wallet.deployContract({ abi: erc20.abi, bytecode: erc20.bytecode, args: [1_000_000n] });
  token = (await pub.waitForTransactionReceipt({ hash: t })).contractAddress!;
  const r = await wallet.deployContract({ abi: slots.abi, bytecode: slots.bytecode });
  reader = (await pub.waitForTransactionReceipt({ hash: r })).contractAddress!;
  const sent = await wallet.writeContract({ address: token, abi: erc20.abi, functionName: 'transfer', args: [other, 250n] });
  // The receipt's block, not getBlockNumber(): viem may answer that from a poll still in
  // flight from an earlier wait, a block before the reader existed.
  forkBlock = (await pub.waitForTransactionReceipt({ hash: sent })).blockNumber;
  // A block after the fork block: the fork must not see it.
  const late = await wallet.writeContract({ address: token, abi: erc20.abi, functionName: 'transfer', args: [other, 5n] });
  await pub.waitForTransactionReceipt({ hash: late });
  proxy = await startUpstreamProxy(anvil.url);
  datadir = mkdtempSync(join(tmpdir(), 'preconf-fork-'));
}, 120_000);

afterAll(async () => {
  await proxy?.stop();
  await anvil?.stop();
  if (datadir) rmSync(datadir, { recursive: true, force: true });
});

describe('a fork of a live chain', () => {
  it('answers as the upstream at the fork block, batches cold reads, keeps writes local, and restarts from its cache', async () => {
    const up = upstreamClient();
    const at = { blockNumber: forkBlock };
    let t = await forkNode();
    try {
      const pub = t.pub;
      expect(await pub.getChainId()).toBe(31337);
      // The fork block is the upstream's, hash and all.
      const upBlock = await up.getBlock(at);
      expect((await pub.getBlock(at)).hash).toBe(upBlock.hash);

      // One cold call that reads 50 slots: one request, not 50: anvil traces calls, so the
      // guess (a prestate trace at the fork block) brings every value the call reads.
      await proxy.reset();
      const sum = await pub.readContract({ address: reader, abi: slots.abi, functionName: 'sum', args: [50n] });
      expect(sum).toBe(await up.readContract({ address: reader, abi: slots.abi, functionName: 'sum', args: [50n], ...at }));
      expect(await proxy.stats()).toEqual({ requests: 1, calls: 1, methods: { debug_traceCall: 1 } });

      // A cold estimate of an ERC-20 transfer (the token never read here): the trace alone.
      // The gas it uses is the upstream's at the fork block to the unit (the values came
      // right); the estimates agree within the 1.5% both binary searches stop at.
      const transfer = { account: other, to: token, data: encodeTransfer(stranger, 7n) } as const;
      await proxy.reset();
      const estimate = await pub.estimateGas(transfer);
      expect(await proxy.stats()).toEqual({ requests: 1, calls: 1, methods: { debug_traceCall: 1 } });
      const upEstimate = await up.estimateGas({ ...transfer, ...at });
      expect(Number(estimate > upEstimate ? estimate - upEstimate : upEstimate - estimate)).toBeLessThanOrEqual(Number(upEstimate) * 0.015);
      const used = async (url: string, block: string) =>
        (await rpc(url, 'eth_createAccessList', [{ from: other, to: token, data: transfer.data }, block])).result.gasUsed;
      expect(await used(t.url, 'latest')).toBe(await used(anvil.url, `0x${forkBlock.toString(16)}`));

      // An upstream that neither traces nor has eth_getStorageValues: the access list names
      // the reads, one batch fetches them slot by slot.
      await proxy.control({ hide: ['eth_getStorageValues', 'debug_traceCall'] });
      await proxy.reset();
      const freshDir = mkdtempSync(join(tmpdir(), 'preconf-fork-'));
      const fresh = await forkNodeAt(freshDir);
      try {
        // Asked once, with the first slots (those every block touches, warmed at start), and refused.
        expect((await proxy.stats()).methods.eth_getStorageValues).toBe(1);
        await proxy.reset();
        expect(await fresh.pub.readContract({ address: reader, abi: slots.abi, functionName: 'sum', args: [50n] })).toBe(sum);
        const bySlot = await proxy.stats();
        expect(bySlot.methods.debug_traceCall).toBe(1);
        expect(bySlot.methods.eth_createAccessList).toBe(1);
        expect(bySlot.methods.eth_getStorageValues).toBeUndefined();
        expect(bySlot.methods.eth_getStorageAt).toBe(50);
        expect(bySlot.requests).toBeLessThanOrEqual(3);
        // The trace was refused once: not asked again, and the estimate is still the upstream's.
        await proxy.reset();
        expect(await fresh.pub.estimateGas(transfer)).toBe(estimate);
        const fallback = await proxy.stats();
        expect(fallback.methods.debug_traceCall).toBeUndefined();
        expect(fallback.methods.eth_createAccessList).toBe(1);
        // Not asked again: the next cold slots go straight to eth_getStorageAt.
        await proxy.reset();
        expect(await fresh.pub.getStorageAt({ address: reader, slot: '0x40' })).toBe(await up.getStorageAt({ address: reader, slot: '0x40', ...at }));
        expect((await proxy.stats()).methods).toEqual({ eth_getStorageAt: 1 });
      } finally {
        await fresh.proc.kill('SIGTERM');
        await proxy.control({ hide: [] });
        rmSync(freshDir, { recursive: true, force: true });
      }

      // Accounts, code, storage and token balances as the upstream's at the fork block,
      // but the dev accounts' ether: as on anvil's fork, each holds 10,000 (a local write
      // at the fork block) whatever it spent upstream.
      expect(await up.getBalance({ address: holder, ...at })).toBeLessThan(DEV_BALANCE);
      const accounts = (await rpc(t.url, 'eth_accounts')).result as string[];
      expect(accounts).toHaveLength(10);
      expect(accounts.slice(0, 2)).toEqual([holder.toLowerCase(), other.toLowerCase()]);
      for (const a of [holder, other, stranger, token]) {
        const dev = a === holder || a === other;
        expect(await pub.getBalance({ address: a })).toBe(dev ? DEV_BALANCE : await up.getBalance({ address: a, ...at }));
        expect(await pub.getTransactionCount({ address: a })).toBe(await up.getTransactionCount({ address: a, ...at }));
        expect(await pub.getCode({ address: a })).toBe(await up.getCode({ address: a, ...at }));
        const balanceOf = { address: token, abi: erc20.abi, functionName: 'balanceOf', args: [a] } as const;
        expect(await pub.readContract(balanceOf)).toBe(await up.readContract({ ...balanceOf, ...at }));
      }
      expect(await pub.getStorageAt({ address: reader, slot: '0x3' })).toBe(await up.getStorageAt({ address: reader, slot: '0x3', ...at }));
      // A repeat is local: no request.
      await proxy.reset();
      await pub.readContract({ address: reader, abi: slots.abi, functionName: 'sum', args: [50n] });
      expect((await proxy.stats()).requests).toBe(0);

      // cast reads the forked state too.
      const castSum = ok(await cast(['call', reader, 'sum(uint256)(uint256)', '10', '--rpc-url', t.url]), 'cast call');
      expect(BigInt(castSum.split(' ')[0]!)).toBe(await up.readContract({ address: reader, abi: slots.abi, functionName: 'sum', args: [10n], ...at }));

      // A local ERC-20 transfer, signed by a key funded upstream: it stays here.
      const upstreamBefore = await up.readContract({ address: token, abi: erc20.abi, functionName: 'balanceOf', args: [stranger] });
      const wallet = createWalletClient({ chain: foundry, transport: http(t.url), account: devAccount(0) });
      const gas = await pub.estimateGas({ account: devAccount(0), to: token, data: encodeTransfer(stranger, 42n) });
      expect(gas).toBeGreaterThan(21_000n);
      const hash = await wallet.writeContract({ address: token, abi: erc20.abi, functionName: 'transfer', args: [stranger, 42n] });
      const receipt = await pub.waitForTransactionReceipt({ hash });
      expect(receipt.status).toBe('success');
      expect(receipt.blockNumber).toBeGreaterThan(forkBlock);
      const child = await pub.getBlock({ blockNumber: forkBlock + 1n });
      expect(child.parentHash).toBe(upBlock.hash);
      expect(await pub.readContract({ address: token, abi: erc20.abi, functionName: 'balanceOf', args: [stranger] })).toBe(42n);
      expect(await up.readContract({ address: token, abi: erc20.abi, functionName: 'balanceOf', args: [stranger] })).toBe(upstreamBefore);
      // Reads before the fork block are refused, naming the upstream.
      const early = await rpc(t.url, 'eth_getBalance', [holder, '0x1']);
      expect(early.error.code).toBe(-32000);
      expect(early.error.message).toContain('before the fork block');
    } finally {
      await t.proc.kill('SIGTERM');
    }

    // Restart on the same datadir: the fork block and every value fetched come from the
    // store; the local transfer is still there.
    await proxy.reset();
    t = await forkNode();
    try {
      const pub = t.pub;
      expect(await pub.readContract({ address: reader, abi: slots.abi, functionName: 'sum', args: [50n] })).toBe(sum50());
      expect(await pub.readContract({ address: token, abi: erc20.abi, functionName: 'balanceOf', args: [other] })).toBe(250n);
      expect(await pub.readContract({ address: token, abi: erc20.abi, functionName: 'balanceOf', args: [stranger] })).toBe(42n);
      expect(await pub.getBalance({ address: other })).toBe(DEV_BALANCE);
      expect(await pub.getBalance({ address: stranger })).toBe(await up.getBalance({ address: stranger, ...at }));
      expect(await proxy.stats()).toEqual({ requests: 0, calls: 0, methods: {} });
    } finally {
      await t.proc.kill('SIGTERM');
    }
  }, 120_000);
});

const sum50 = () => Array.from({ length: 50 }, (_, i) => BigInt(i * 7 + 1)).reduce((a, b) => a + b, 0n);

function encodeTransfer(to: Address, value: bigint): Hex {
  return `0xa9059cbb${to.slice(2).toLowerCase().padStart(64, '0')}${value.toString(16).padStart(64, '0')}` as Hex;
}
