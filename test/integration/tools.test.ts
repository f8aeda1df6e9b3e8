// The tools users already run, unchanged, against the real `preconf-node` command: Foundry's
// cast and forge (npm binaries), ethers v6 and viem. By default a receipt means "sealed",
// so every tool that waits for a receipt and then reads `latest` sees its own transaction.
// With --preconf-receipts (Base-style) the same flows behave as docs/methods.md documents.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { JsonRpcProvider, Wallet } from 'ethers';
import { createPublicClient, createWalletClient, defineChain, http, type Address, type Hex } from 'viem';
import { DEV_KEYS, devAccount, rpc } from '../helpers/node.js';
import { spawnNode, type NodeProcess } from '../helpers/process.js';
import { cast, ForgeProject, ok } from '../helpers/foundry.js';

const ZERO_HASH = `0x${'0'.repeat(64)}`;
const SCRIPT = 'Deploy.s.sol';

/** Waits (vitest's vi.waitFor) until `probe` gives something. */
const until = <T>(what: string, probe: () => Promise<T | null | undefined>, timeoutMs = 10_000): Promise<T> =>
  vi.waitFor(
    async () => {
      const v = await probe();
      if (v === null || v === undefined) throw new Error(`timed out waiting for ${what}`);
      return v;
    },
    { timeout: timeoutMs, interval: 50 },
  );

const field = (out: string, name: string): string => {
  const m = new RegExp(`^${name}\\s+(\\S+)`, 'm').exec(out);
  if (!m) throw new Error(`no ${name} in:\n${out}`);
  return m[1]!;
};

const deployedTo = (out: string): Address => {
  const m = /Deployed to: (0x[0-9a-fA-F]{40})/.exec(out);
  if (!m) throw new Error(`forge create printed no address:\n${out}`);
  return m[1] as Address;
};

function clients(url: string) {
  const chain = defineChain({
    id: 31337,
    name: 'preconf',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  });
  const transport = http(url, { retryCount: 0 });
  return {
    publicClient: createPublicClient({ chain, transport, pollingInterval: 250 }),
    wallet: (i: number) => createWalletClient({ chain, transport, account: devAccount(i), pollingInterval: 250 }),
  };
}

async function stop(node: NodeProcess | undefined): Promise<void> {
  if (!node || node.child.exitCode !== null) return;
  node.child.kill('SIGTERM');
  await node.exited;
}

const nonceAt = async (url: string, i: number, tag: string): Promise<number> =>
  Number.parseInt((await rpc(url, 'eth_getTransactionCount', [devAccount(i).address, tag])).result as string, 16);
const balanceAt = async (url: string, address: string, tag: string): Promise<bigint> =>
  BigInt((await rpc(url, 'eth_getBalance', [address, tag])).result as string);

describe('Foundry, ethers and viem with the default receipts (once sealed)', () => {
  let node: NodeProcess | undefined;
  let project: ForgeProject;

  beforeAll(async () => {
    project = new ForgeProject();
    node = await spawnNode(['--ephemeral']);
  });
  afterAll(async () => {
    await stop(node);
    project?.remove();
  });

  it('three consecutive cast sends from one key all succeed', async () => {
    const url = node!.url;
    const to = devAccount(1).address;
    const before = await balanceAt(url, to, 'latest');
    for (let i = 0; i < 3; i++) {
      const out = ok(await cast(['send', '--private-key', DEV_KEYS[0], to, '--value', '1', '--rpc-url', url]), `cast send #${i + 1}`);
      expect(field(out, 'status')).toBe('1');
      // The receipt names a real, sealed block.
      const number = `0x${Number(field(out, 'blockNumber')).toString(16)}`;
      const block = (await rpc(url, 'eth_getBlockByNumber', [number, false])).result;
      expect(field(out, 'blockHash')).toBe(block.hash);
    }
    expect(await nonceAt(url, 0, 'latest')).toBe(3);
    expect(await balanceAt(url, to, 'latest')).toBe(before + 3n);
  });

  it('forge create, then cast call at latest returns the constructor value', async () => {
    const url = node!.url;
    const out = ok(
      await project.forge(['create', 'src/Counter.sol:Counter', '--rpc-url', url, '--private-key', DEV_KEYS[2], '--broadcast', '--constructor-args', '7']),
      'forge create',
    );
    const address = deployedTo(out);
    expect(ok(await cast(['call', address, 'number()(uint256)', '--rpc-url', url]), 'cast call').trim()).toBe('7');
  });

  it('forge script --broadcast sends three dependent transactions and all land', async () => {
    const url = node!.url;
    ok(await project.forge(['script', `script/${SCRIPT}:Deploy`, '--rpc-url', url, '--broadcast'], { DEPLOYER_KEY: DEV_KEYS[3] }), 'forge script');
    const run = project.lastBroadcast(SCRIPT, 31337);
    expect(run.transactions).toHaveLength(3);
    expect(run.receipts.map((r) => r.status)).toEqual(['0x1', '0x1', '0x1']);
    const counter = (run.transactions[0] as { contractAddress: Address }).contractAddress;
    // Deployed at 40, incremented twice.
    expect(ok(await cast(['call', counter, 'number()(uint256)', '--rpc-url', url]), 'cast call').trim()).toBe('42');
    expect(await nonceAt(url, 3, 'latest')).toBe(3);
  });

  it('ethers v6: sendTransaction + wait() three times, then getBalance', async () => {
    const url = node!.url;
    const provider = new JsonRpcProvider(url, 31337, { staticNetwork: true, pollingInterval: 250 });
    const wallet = new Wallet(DEV_KEYS[4], provider);
    const to = devAccount(5).address;
    const before = await provider.getBalance(to);
    for (let i = 0; i < 3; i++) {
      const tx = await wallet.sendTransaction({ to, value: 1000n });
      const receipt = await tx.wait();
      expect(receipt?.status).toBe(1);
      expect(receipt?.blockHash).not.toBe(ZERO_HASH);
    }
    expect(await provider.getBalance(to)).toBe(before + 3000n);
    provider.destroy();
  });

  it('viem: deployContract, writeContract, then readContract at latest', async () => {
    const { publicClient, wallet } = clients(node!.url);
    ok(await project.forge(['build']), 'forge build');
    const { abi, bytecode } = project.counter();
    const w = wallet(6);
    const deploy = await w.deployContract({ abi, bytecode, args: [100n] });
    const address = (await publicClient.waitForTransactionReceipt({ hash: deploy })).contractAddress!;
    const hash = await w.writeContract({ address, abi, functionName: 'increment' });
    expect((await publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
    expect(await publicClient.readContract({ address, abi, functionName: 'number' })).toBe(101n);
  });
});

// No seal falls inside these flows (the block time is far longer than the suite), so the
// window between a pre-confirmed receipt and `latest` catching up is certain, as it is
// for most of every block at the default cadence.
describe('the same flows with --preconf-receipts, as the README documents', () => {
  let node: NodeProcess | undefined;
  let project: ForgeProject;

  beforeAll(async () => {
    project = new ForgeProject();
    node = await spawnNode(['--ephemeral', '--preconf-receipts', '--block-time-ms', '300000']);
    ok(await project.forge(['build']), 'forge build');
  });
  afterAll(async () => {
    await stop(node);
    project?.remove();
  });

  it('cast send: the receipt comes at once, and the second send says nonce too low', async () => {
    const url = node!.url;
    const to = devAccount(1).address;
    const first = ok(await cast(['send', '--private-key', DEV_KEYS[0], to, '--value', '1', '--rpc-url', url]), 'cast send #1');
    expect(field(first, 'blockHash')).toBe(ZERO_HASH);
    const second = await cast(['send', '--private-key', DEV_KEYS[0], to, '--value', '1', '--rpc-url', url]);
    expect(second.code).not.toBe(0);
    expect(second.stderr).toMatch(/nonce too low: .* tx: 0 state: 1/);
  });

  it('forge create succeeds, but cast call at latest finds no code until the seal (pending has it)', async () => {
    const url = node!.url;
    const address = deployedTo(
      ok(
        await project.forge(['create', 'src/Counter.sol:Counter', '--rpc-url', url, '--private-key', DEV_KEYS[2], '--broadcast', '--constructor-args', '7']),
        'forge create',
      ),
    );
    const latest = await cast(['call', address, 'number()(uint256)', '--rpc-url', url]);
    expect(latest.code).not.toBe(0);
    expect(latest.stderr).toMatch(/does not have any code/);
    expect(ok(await cast(['call', address, 'number()(uint256)', '--rpc-url', url, '--block', 'pending']), 'cast call pending').trim()).toBe('7');
  });

  it('forge script --broadcast works once; a second run from the same key says nonce too low', async () => {
    const url = node!.url;
    const env = { DEPLOYER_KEY: DEV_KEYS[3] };
    ok(await project.forge(['script', `script/${SCRIPT}:Deploy`, '--rpc-url', url, '--broadcast'], env), 'forge script #1');
    expect(project.lastBroadcast(SCRIPT, 31337).receipts.map((r) => r.status)).toEqual(['0x1', '0x1', '0x1']);
    // The second run simulates against `latest`, where the first run's nonces are not yet.
    const again = await project.forge(['script', `script/${SCRIPT}:Deploy`, '--rpc-url', url, '--broadcast'], env);
    expect(again.code).not.toBe(0);
    expect(`${again.stdout}${again.stderr}`).toMatch(/nonce too low/);
  });

  it('ethers: wait() on a pre-confirmed transaction returns at once, and getBalance at latest does not show it yet', async () => {
    const url = node!.url;
    // ethers answers an identical request from its own cache for 250 ms (`cacheTimeout`):
    // with pre-confirmed receipts the next send can come sooner than that and reuse the
    // previous `pending` nonce ("nonce has already been used"). docs/methods.md says so.
    const provider = new JsonRpcProvider(url, 31337, { staticNetwork: true, pollingInterval: 250, cacheTimeout: -1 });
    const wallet = new Wallet(DEV_KEYS[4], provider);
    const to = devAccount(5).address;
    const before = await provider.getBalance(to);
    for (let i = 0; i < 3; i++) {
      // ethers takes nonces from `pending`, so consecutive sends work.
      const tx = await wallet.sendTransaction({ to, value: 1000n });
      // wait() returns a receipt it finds on its first look; otherwise it looks again on
      // new block numbers (the seal). Once pre-confirmed, the first look finds it.
      await until('the pre-confirmed receipt', () => provider.getTransactionReceipt(tx.hash));
      const receipt = await tx.wait();
      expect(receipt?.status).toBe(1);
      expect(receipt?.blockHash).toBe(ZERO_HASH);
    }
    expect(await provider.getBalance(to)).toBe(before);
    expect(await provider.getBalance(to, 'pending')).toBe(before + 3000n);
    provider.destroy();
  });

  it('viem: a pre-confirmed receipt is returned at once, and readContract at latest misses the contract', async () => {
    const { publicClient, wallet } = clients(node!.url);
    const { abi, bytecode } = project.counter();
    const w = wallet(6);
    const deploy = await w.deployContract({ abi, bytecode, args: [100n] });
    // As a wallet polling receipts does (viem's own wait polls on new block numbers).
    await until('the pre-confirmed receipt', () => publicClient.getTransactionReceipt({ hash: deploy }).catch(() => null));
    const address = (await publicClient.waitForTransactionReceipt({ hash: deploy })).contractAddress!;
    const hash: Hex = await w.writeContract({ address, abi, functionName: 'increment' });
    await until('the pre-confirmed receipt', () => publicClient.getTransactionReceipt({ hash }).catch(() => null));
    await expect(publicClient.readContract({ address, abi, functionName: 'number' })).rejects.toThrow(/returned no data/);
    expect(await publicClient.readContract({ address, abi, functionName: 'number', blockTag: 'pending' })).toBe(101n);
  });
});
