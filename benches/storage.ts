// `node --import tsx benches/storage.ts`: what the store costs on disk, archive and pruned
// (--history-blocks), so an operator can size the disk for years.
//
// --mode bytes: bytes per transaction of each kind (a transfer between existing accounts,
//   a transfer to a new account, an ERC-20 transfer between existing holders, a contract
//   deployment) and per empty block, on an archive node and on a pruned one
//   (--history-blocks 128). Each kind runs R transactions per block for 140 blocks (the
//   128-block trie window and the pruning window fill) and is measured over the next 150:
//   the growth of preconf_store_live_bytes per block, less an empty block's, over R.
// --mode soak: a steady rate of transfers to a fixed set of accounts for --minutes on a
//   node with --history-blocks (0: archive), sampling live bytes, the file's size and the
//   history window every 30 s, and the pre-confirmation cadence on the builder's clock
//   (from --cadence-from-minute on). Two runs side by side compare archive and pruned.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeAbiParameters, encodeFunctionData, parseGwei, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { freePort } from '../test/helpers/anvil.js';
import { contract } from '../test/helpers/contracts.js';
import { devAccount } from '../test/helpers/node.js';
import { watchStamps } from './scaling/stamps.js';
import { histogramQuantiles } from './scaling/metrics.js';
import { ROOT, rpc, rpcRaw, sleep } from './util.js';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : dflt;
};
const MODE = arg('mode', 'bytes');
const log = (m: string) => process.stderr.write(`[storage] ${m}\n`);
const token = contract('Token');
const fee = { chainId: 31337, type: 'eip1559' as const, maxFeePerGas: parseGwei('20'), maxPriorityFeePerGas: 1n };

interface Node {
  url: string;
  child: ChildProcess;
  datadir: string;
  dir: string;
}

async function startNode(flags: string[]): Promise<Node> {
  const dir = mkdtempSync(join(tmpdir(), 'storage-bench-'));
  const datadir = join(dir, 'data');
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [join(ROOT, 'bin', 'preconf-node.cjs'), '--port', String(port), '--quiet', '--datadir', datadir, '--log-level', 'warn', ...flags],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    try {
      await rpc(url, 'eth_blockNumber');
      return { url, child, datadir, dir };
    } catch {
      await sleep(100);
    }
  }
}

async function stopNode(n: Node): Promise<void> {
  n.child.kill('SIGTERM');
  await new Promise((r) => n.child.once('exit', r));
  rmSync(n.dir, { recursive: true, force: true });
}

const gauge = async (url: string, name: string): Promise<number> => {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
};
const head = async (url: string) => Number(await rpc<string>(url, 'eth_blockNumber'));
const untilBlock = async (url: string, n: number) => {
  while ((await head(url)) < n) await sleep(20);
};
/** Live bytes once block `n` is durable. */
const liveAt = async (url: string, n: number): Promise<number> => {
  while ((await gauge(url, 'preconf_durable_block')) < n) await sleep(20);
  return gauge(url, 'preconf_store_live_bytes');
};

class Sender {
  nonce = 0;
  constructor(readonly account = devAccount(0)) {}
  /** Sends `txs` in one batch; their hashes. */
  async send(url: string, txs: Record<string, unknown>[]): Promise<Hex[]> {
    const raws = await Promise.all(txs.map((tx) => this.account.signTransaction({ ...fee, nonce: this.nonce++, ...tx } as never)));
    const r = (await rpcRaw(url, JSON.stringify(raws.map((raw, id) => ({ jsonrpc: '2.0', id, method: 'eth_sendRawTransaction', params: [raw] }))))) as {
      result?: Hex;
      error?: { message: string };
    }[];
    const failed = r.find((x) => x.error);
    if (failed) throw new Error(`eth_sendRawTransaction: ${failed.error!.message}`);
    return r.map((x) => x.result!);
  }
}

const deployData = (token.bytecode + encodeAbiParameters([{ type: 'uint256' }], [10n ** 30n]).slice(2)) as Hex;

async function bytesMode(): Promise<void> {
  const perBlock = Number(arg('tx-per-block', '20'));
  const blockMs = Number(arg('block-time-ms', '200'));
  const [warm, measure] = [140, 150];
  const rows: string[] = [];
  for (const history of [0, 128]) {
    const node = await startNode([
      '--block-time-ms',
      String(blockMs),
      '--preconf-interval-ms',
      String(Math.min(50, blockMs)),
      '--history-blocks',
      String(history),
    ]);
    const url = node.url;
    const senders = [0, 1, 2, 3].map((i) => new Sender(devAccount(i)));
    // Existing accounts and token holders to send to, and the token.
    const recipients = Array.from({ length: perBlock }, () => privateKeyToAccount(generatePrivateKey()).address);
    await senders[0]!.send(
      url,
      recipients.map((to) => ({ to, value: 1n, gas: 21000n })),
    );
    const [deploy] = await senders[2]!.send(url, [{ data: deployData, gas: 3_000_000n }]);
    let receipt: { contractAddress: Hex } | null = null;
    while (!(receipt = await rpc<{ contractAddress: Hex } | null>(url, 'eth_getTransactionReceipt', [deploy]))) await sleep(50);
    const deployed = receipt.contractAddress;
    const tokenTx = (to: Hex) => ({ to: deployed, gas: 100_000n, data: encodeFunctionData({ abi: token.abi, functionName: 'transfer', args: [to, 1n] }) });
    await senders[2]!.send(
      url,
      recipients.map((to) => tokenTx(to)),
    );
    const kinds: [string, (i: number) => Record<string, unknown>[]][] = [
      ['empty block', () => []],
      ['transfer (existing account)', () => recipients.map((to) => ({ to, value: 1n, gas: 21000n }))],
      ['transfer to a new account', () => recipients.map(() => ({ to: privateKeyToAccount(generatePrivateKey()).address, value: 1n, gas: 21000n }))],
      ['ERC-20 transfer (existing holders)', () => recipients.map((to) => tokenTx(to))],
      ['contract deployment (Token, 1.9 kB)', () => recipients.map(() => ({ data: deployData, gas: 3_000_000n }))],
    ];
    const sender = {
      'empty block': 0,
      'transfer (existing account)': 0,
      'transfer to a new account': 1,
      'ERC-20 transfer (existing holders)': 2,
      'contract deployment (Token, 1.9 kB)': 3,
    } as Record<string, number>;
    let emptyPerBlock = 0;
    for (const [kind, make] of kinds) {
      const start = await head(url);
      let measuredFrom = 0;
      let liveFrom = 0;
      for (let b = 0; b < warm + measure; b++) {
        if (b === warm) {
          measuredFrom = await head(url);
          liveFrom = await liveAt(url, measuredFrom);
        }
        const txs = make(b);
        if (txs.length > 0) await senders[sender[kind]!]!.send(url, txs);
        await untilBlock(url, start + b + 1);
      }
      const to = await head(url);
      const liveTo = await liveAt(url, to);
      const perBlockBytes = (liveTo - liveFrom) / (to - measuredFrom);
      if (kind === 'empty block') emptyPerBlock = perBlockBytes;
      const perTx = kind === 'empty block' ? perBlockBytes : (perBlockBytes - emptyPerBlock) / perBlock;
      log(`${history ? `pruned (${history})` : 'archive'}: ${kind}: ${perTx.toFixed(0)} bytes${kind === 'empty block' ? ' per block' : ' per transaction'}`);
      rows.push(`| ${history ? `pruned, --history-blocks ${history}` : 'archive'} | ${kind} | ${perTx.toFixed(0)} |`);
    }
    log(
      `file ${(statSync(join(node.datadir, 'chain.redb')).size / 2 ** 20).toFixed(1)} MiB, live ${((await gauge(url, 'preconf_store_live_bytes')) / 2 ** 20).toFixed(1)} MiB`,
    );
    await stopNode(node);
  }
  console.log(`| store | kind | bytes per transaction (per block for the empty block) |\n|---|---|---|\n${rows.join('\n')}`);
}

async function soakMode(): Promise<void> {
  const minutes = Number(arg('minutes', '60'));
  const rate = Number(arg('rate', '100'));
  const history = Number(arg('history-blocks', '300'));
  /** Watch the cadence from this minute on (a pruned node prunes once its window is full). */
  const cadenceFrom = Number(arg('cadence-from-minute', '0'));
  const node = await startNode(['--history-blocks', String(history)]);
  const url = node.url;
  const senders = Array.from({ length: 10 }, (_, i) => new Sender(devAccount(i)));
  const recipients = Array.from({ length: 1000 }, () => privateKeyToAccount(generatePrivateKey()).address);
  let stamps = cadenceFrom === 0 ? await watchStamps(url) : undefined;
  const t0 = performance.now();
  const samples: { minute: number; head: number; historyFrom: number; live: number; file: number }[] = [];
  let sent = 0;
  let nextSample = 0;
  for (let tick = 0; performance.now() - t0 < minutes * 60_000; tick++) {
    // A tenth of a second's transactions every 100 ms, spread over the ten senders.
    await sleep(Math.max(0, t0 + tick * 100 - performance.now()));
    if (stamps === undefined && performance.now() - t0 >= cadenceFrom * 60_000) stamps = await watchStamps(url);
    const n = Math.round(rate / 10);
    const s = senders[tick % senders.length]!;
    await s.send(
      url,
      Array.from({ length: n }, () => ({ to: recipients[sent++ % recipients.length]!, value: 1n, gas: 21000n })),
    );
    if (performance.now() - t0 >= nextSample) {
      nextSample += 30_000;
      const sample = {
        minute: (performance.now() - t0) / 60_000,
        head: await head(url),
        historyFrom: await gauge(url, 'preconf_history_oldest_block'),
        live: await gauge(url, 'preconf_store_live_bytes'),
        file: statSync(join(node.datadir, 'chain.redb')).size,
      };
      samples.push(sample);
      log(
        `${sample.minute.toFixed(1)} min: head ${sample.head}, oldest kept ${sample.historyFrom}, live ${(sample.live / 2 ** 20).toFixed(1)} MiB, file ${(sample.file / 2 ** 20).toFixed(1)} MiB, ${sent} txs`,
      );
    }
  }
  const cadence = stamps!.stop();
  const tickDelay = await histogramQuantiles(url, 'preconf_builder_tick_delay_seconds');
  const commit = await histogramQuantiles(url, 'preconf_store_commit_duration_seconds');
  await stopNode(node);
  console.log(`${history ? `--history-blocks ${history}` : 'archive'}, ${rate} transfers/s to 1,000 accounts, ${minutes} min, ${sent} transactions`);
  console.log(
    `cadence on the builder's clock (from minute ${cadenceFrom}) p50 / p99 / max: ${cadence.p50} / ${cadence.p99} / ${cadence.max} ms (${cadence.count} intervals); tick delay p99 ${tickDelay?.p99.toFixed(1)} ms; commit p50 / p99 ${commit?.p50.toFixed(0)} / ${commit?.p99.toFixed(0)} ms`,
  );
  console.log('| minute | head | oldest kept | live bytes (MiB) | file (MiB) |\n|---|---|---|---|---|');
  for (const s of samples.filter((_, i) => i % 10 === 0 || i === samples.length - 1)) {
    console.log(`| ${s.minute.toFixed(0)} | ${s.head} | ${s.historyFrom} | ${(s.live / 2 ** 20).toFixed(1)} | ${(s.file / 2 ** 20).toFixed(1)} |`);
  }
}

(MODE === 'soak' ? soakMode() : bytesMode()).catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
