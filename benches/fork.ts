// `node --import tsx benches/fork.ts [--delay-ms 50] [--slots 50]`: a fork's cold start,
// this node against `anvil --fork-url`, in the same run and against the same upstream
// (anvil on loopback holding an ERC-20 and a contract reading many slots), each behind its
// own proxy that delays every upstream request by --delay-ms and counts them.
// For each: a cold eth_call reading SLOTS slots; a cold eth_estimateGas of an ERC-20
// transfer and its send to receipt; a warm repeat of the call; then a restart on the same
// datadir (anvil: its own cache) and the same call. Times are round trips from here.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, createWalletClient, encodeFunctionData, http, parseGwei, type Address, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import { startAnvil, type Anvil } from '../test/helpers/anvil.js';
import { contract } from '../test/helpers/contracts.js';
import { devAccount } from '../test/helpers/node.js';
import { spawnNode } from '../test/helpers/process.js';
import { startUpstreamProxy, type UpstreamProxy } from '../test/helpers/upstream-proxy.js';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : dflt;
};
const DELAY = Number(arg('delay-ms', '50'));
const SLOTS = BigInt(arg('slots', '50'));
const log = (m: string) => process.stderr.write(`[fork] ${m}\n`);
const erc20 = contract('Erc20');
const slots = contract('Slots');
const holder = devAccount(2);
const SINK: Address = '0x000000000000000000000000000000000000517c';

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await r.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const r = await work();
  return [r, performance.now() - t0];
}

interface Server {
  url: string;
  stop(): Promise<void>;
}

interface Figures {
  coldCallMs: number;
  coldCallRequests: number;
  estimateMs: number;
  estimateRequests: number;
  sendMs: number;
  sendRequests: number;
  warmCallMs: number;
  warmRequests: number;
  restartCallMs: number;
  restartRequests: number;
}

async function measure(name: string, start: (restart: boolean) => Promise<Server>, proxy: UpstreamProxy, token: Address, reader: Address): Promise<Figures> {
  const call = { to: reader, data: encodeFunctionData({ abi: slots.abi, functionName: 'sum', args: [SLOTS] }) };
  let server = await start(false);
  await proxy.reset();
  const [, coldCallMs] = await timed(() => rpc(server.url, 'eth_call', [call, 'latest']));
  const coldCallRequests = (await proxy.stats()).requests;
  await proxy.reset();
  const data = encodeFunctionData({ abi: erc20.abi, functionName: 'transfer', args: [SINK, 1n] });
  const [gas, estimateMs] = await timed(async () => BigInt((await rpc(server.url, 'eth_estimateGas', [{ from: holder.address, to: token, data }])) as string));
  const estimateRequests = (await proxy.stats()).requests;
  await proxy.reset();
  const nonce = Number((await rpc(server.url, 'eth_getTransactionCount', [holder.address, 'latest'])) as string);
  const raw = await holder.signTransaction({
    chainId: 31337,
    type: 'eip1559',
    nonce,
    gas: gas * 2n,
    maxFeePerGas: parseGwei('100'),
    maxPriorityFeePerGas: 1n,
    to: token,
    data,
  });
  const [, sendMs] = await timed(async () => {
    const hash = await rpc(server.url, 'eth_sendRawTransaction', [raw]);
    for (;;) {
      if ((await rpc(server.url, 'eth_getTransactionReceipt', [hash])) !== null) return;
      await new Promise((r) => setTimeout(r, 5));
    }
  });
  const sendRequests = (await proxy.stats()).requests;
  await proxy.reset();
  const [, warmCallMs] = await timed(() => rpc(server.url, 'eth_call', [call, 'latest']));
  const warmRequests = (await proxy.stats()).requests;
  await server.stop();
  server = await start(true);
  await proxy.reset();
  const [, restartCallMs] = await timed(() => rpc(server.url, 'eth_call', [call, 'latest']));
  const restartRequests = (await proxy.stats()).requests;
  await server.stop();
  const f = { coldCallMs, coldCallRequests, estimateMs, estimateRequests, sendMs, sendRequests, warmCallMs, warmRequests, restartCallMs, restartRequests };
  log(`${name}: ${JSON.stringify(f)}`);
  return f;
}

async function main(): Promise<void> {
  const upstream: Anvil = await startAnvil();
  const wallet = createWalletClient({ chain: foundry, transport: http(upstream.url), account: devAccount(0) });
  const pub = createPublicClient({ chain: foundry, transport: http(upstream.url) });
  const t = await wallet.deployContract({ abi: erc20.abi, bytecode: erc20.bytecode, args: [1_000_000n] });
  const token = (await pub.waitForTransactionReceipt({ hash: t })).contractAddress!;
  const r = await wallet.deployContract({ abi: slots.abi, bytecode: slots.bytecode });
  const reader = (await pub.waitForTransactionReceipt({ hash: r })).contractAddress!;
  const fund = await wallet.writeContract({ address: token, abi: erc20.abi, functionName: 'transfer', args: [holder.address, 1000n] });
  await pub.waitForTransactionReceipt({ hash: fund });
  const block = String(await pub.getBlockNumber());
  const ours = await startUpstreamProxy(upstream.url, DELAY);
  const theirs = await startUpstreamProxy(upstream.url, DELAY);
  const datadir = mkdtempSync(join(tmpdir(), 'preconf-fork-bench-'));
  try {
    const node = await measure(
      'preconf-node',
      async () => {
        const n = await spawnNode([
          '--fork-url',
          ours.url,
          '--fork-block-number',
          block,
          '--datadir',
          datadir,
          '--preconf-interval-ms',
          '50',
          '--block-time-ms',
          '200',
        ]);
        return { url: n.url, stop: async () => void (await n.kill('SIGTERM')) };
      },
      ours,
      token,
      reader,
    );
    const anvil = await measure(
      'anvil',
      async () => {
        const a = await startAnvil(['--fork-url', theirs.url, '--fork-block-number', block]);
        return { url: a.url, stop: () => a.stop() };
      },
      theirs,
      token,
      reader,
    );
    const ratio = (k: keyof Figures) => (anvil[k] / node[k]).toFixed(1);
    console.log(
      JSON.stringify(
        {
          delayMs: DELAY,
          slots: Number(SLOTS),
          node,
          anvil,
          anvilOverNode: { coldCall: ratio('coldCallMs'), estimate: ratio('estimateMs'), send: ratio('sendMs') },
        },
        null,
        2,
      ),
    );
  } finally {
    rmSync(datadir, { recursive: true, force: true });
    await ours.stop();
    await theirs.stop();
    await upstream.stop();
  }
}

void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
