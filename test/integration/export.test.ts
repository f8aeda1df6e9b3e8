// `preconf-node export` writes what `preconf-node import` reads. A chain built
// by the node (transfers, transfers to new accounts, a token deployment and token
// transfers) is exported from its stopped datadir and imported into a fresh datadir with the
// same genesis: same head hash and state root; a range exports only those blocks.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeAbiParameters, encodeFunctionData, parseGwei, toHex, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, it } from 'vitest';
import { contract } from '../helpers/contracts.js';
import { testGenesis, type GenesisAccount } from '../helpers/genesis.js';
import { devAccount, rpc } from '../helpers/node.js';
import { runCommand as run, spawnNode, type NodeProcess } from '../helpers/process.js';
import { waitFor } from '../helpers/wait.js';

const SYSTEM_CONTRACTS = [
  '0x000F3df6D732807Ef1319fB7B8bB8522d0Beac02',
  '0x0000F90827F1C53a10cb7A02335B175320002935',
  '0x00000961Ef480Eb55e80D19ad83579A64c007002',
  '0x0000BBdDc7CE488642fb579F8B00f3a590007251',
];

describe('preconf-node export', () => {
  const dir = mkdtempSync(join(tmpdir(), 'export-it-'));
  let node: NodeProcess | undefined;
  afterAll(async () => {
    await node?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  /** The Cancun and Prague system contracts, as the dev chain holds them (an import runs
   *  their system calls and refuses a chain without them). */
  async function systemContracts(): Promise<Record<string, GenesisAccount>> {
    const dev = await spawnNode(['--ephemeral']);
    try {
      const out: Record<string, GenesisAccount> = {};
      for (const a of SYSTEM_CONTRACTS) out[a] = { balance: '0x0', nonce: '0x1', code: (await rpc(dev.url, 'eth_getCode', [a, 'latest'])).result };
      return out;
    } finally {
      await dev.kill('SIGTERM');
    }
  }

  it('round trip: export, import into a fresh datadir with the same genesis: same head hash and state root', async () => {
    const sender = devAccount(0);
    const genesisFile = join(dir, 'genesis.json');
    const alloc = { ...(await systemContracts()), [sender.address]: { balance: toHex(10n ** 24n) } };
    writeFileSync(genesisFile, JSON.stringify(testGenesis('prague', alloc)));
    const source = join(dir, 'source');
    node = await spawnNode(['--genesis', genesisFile, '--datadir', source, '--block-time-ms', '1000', '--preconf-interval-ms', '200']);
    const url = node.url;
    const fee = { maxFeePerGas: parseGwei('20'), maxPriorityFeePerGas: 1n, chainId: 31337, type: 'eip1559' as const };
    const send = async (tx: Record<string, unknown>, nonce: number): Promise<Hex> => {
      const raw = await sender.signTransaction({ ...fee, nonce, ...tx } as never);
      const r = await rpc(url, 'eth_sendRawTransaction', [raw]);
      expect(r.error, JSON.stringify(r.error)).toBeUndefined();
      return r.result as Hex;
    };
    let nonce = 0;
    const token = contract('Token');
    const deployData = (token.bytecode + encodeAbiParameters([{ type: 'uint256' }], [10n ** 24n]).slice(2)) as Hex;
    const deploy = await send({ data: deployData, gas: 3_000_000n }, nonce++);
    for (let i = 0; i < 6; i++) {
      await send({ to: privateKeyToAccount(generatePrivateKey()).address, value: 1000n + BigInt(i), gas: 21000n }, nonce++);
      await send({ to: sender.address, value: 1n, gas: 21000n }, nonce++);
    }
    const receipt = async (h: Hex): Promise<any> => (await rpc(url, 'eth_getTransactionReceipt', [h])).result;
    await waitFor(async () => (await receipt(deploy)) !== null, 15_000, 'the deployment sealed');
    const tokenAddress = (await receipt(deploy)).contractAddress as Hex;
    const mint = encodeFunctionData({ abi: token.abi, functionName: 'transfer', args: [privateKeyToAccount(generatePrivateKey()).address, 5n] });
    const last = await send({ to: tokenAddress, data: mint, gas: 200_000n }, nonce++);
    await waitFor(async () => (await receipt(last)) !== null, 15_000, 'the last transaction sealed');
    expect(await node.kill('SIGTERM')).toBe(0);
    node = undefined;

    const file = join(dir, 'chain.rlp');
    const exported = await run(['export', '--datadir', source, file]);
    expect(exported.code, exported.stderr).toBe(0);
    const m = /exported blocks 1 to (\d+) \(\d+ bytes\)/.exec(exported.stdout);
    expect(m, exported.stdout).not.toBeNull();
    const head = Number(m![1]);
    expect(head).toBeGreaterThanOrEqual(2);

    const copy = join(dir, 'copy');
    const imported = await run(['import', '--genesis', genesisFile, '--datadir', copy, '--quiet', file]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain(`imported ${head} blocks`);

    // Both datadirs served side by side: the same head block, hash and state root.
    const a = await spawnNode(['--genesis', genesisFile, '--datadir', source, '--no-build']);
    const b = await spawnNode(['--genesis', genesisFile, '--datadir', copy, '--no-build']);
    try {
      const [ha, hb] = await Promise.all([a, b].map(async (n) => (await rpc(n.url, 'eth_getBlockByNumber', [toHex(head), false])).result));
      expect(hb.hash).toBe(ha.hash);
      expect(hb.stateRoot).toBe(ha.stateRoot);
      expect(Number(BigInt((await rpc(b.url, 'eth_blockNumber')).result))).toBe(head);
      const balance = async (n: NodeProcess) => (await rpc(n.url, 'eth_getBalance', [sender.address, 'latest'])).result;
      expect(await balance(b)).toBe(await balance(a));
    } finally {
      await a.kill('SIGTERM');
      await b.kill('SIGTERM');
    }

    // A range: only those blocks, which import on top of a store that holds their parent.
    const part = join(dir, 'part.rlp');
    const ranged = await run(['export', '--datadir', source, '--from', '2', '--to', String(head), part]);
    expect(ranged.code, ranged.stderr).toBe(0);
    expect(ranged.stdout).toContain(`exported blocks 2 to ${head}`);
    expect(readFileSync(part).length).toBeLessThan(readFileSync(file).length);
    const beyond = await run(['export', '--datadir', source, '--to', String(head + 5), join(dir, 'x.rlp')]);
    expect(beyond.code).toBe(1);
    expect(beyond.stderr).toContain(`the store holds blocks 0 to ${head}`);
  }, 120_000);
});
