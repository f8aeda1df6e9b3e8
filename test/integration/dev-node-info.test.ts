// What clients ask a test node about itself (eth_coinbase, anvil_nodeInfo, anvil_metadata,
// anvil_getGenesisTime), anvil_setTime, anvil_removePoolTransactions, and the settings it has nothing to change for
// (anvil_setLoggingEnabled, anvil_setMinGasPrice, anvil_setRpcUrl), called through viem's
// test client (raw where viem has no action) on anvil and on this node, and compared.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createTestClient, createWalletClient, http, parseGwei, toHex, type Address } from 'viem';
import { foundry } from 'viem/chains';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { testGenesis } from '../helpers/genesis.js';
import { devAccount, rpc, startTestNode, withTestNode, type TestNode } from '../helpers/node.js';

const ZERO = '0x0000000000000000000000000000000000000000';
const COINBASE = '0x00000000000000000000000000000000000c0b0b' as Address;

function clients(url: string) {
  const chain = { ...foundry, rpcUrls: { default: { http: [url] } } };
  const transport = http(url, { retryCount: 0 });
  return { test: createTestClient({ mode: 'anvil', chain, transport }), pub: createPublicClient({ chain, transport }) };
}

/** A JSON-RPC answer as plain data: the result, or the error's code and message. */
async function answer(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const r = await rpc(url, method, params);
  return r.error === undefined ? { result: r.result } : { code: r.error.code, message: r.error.message };
}

const code = async (url: string, method: string, params: unknown[]): Promise<unknown> =>
  ((await rpc(url, method, params)).error as { code?: number } | undefined)?.code;

describe('what a test node says about itself, here as on anvil', () => {
  let anvil: Anvil;
  let t: TestNode;
  beforeAll(async () => {
    anvil = await startAnvil();
    // Blocks are sealed only when asked, so the block being built stays the one set up.
    t = await startTestNode({ configure: (c) => void (c.chain.blockTimeMs = 60_000) });
  });
  afterAll(async () => {
    await t?.stop();
    await anvil?.stop();
  });

  it('eth_coinbase is the address the next block credits, which anvil_setCoinbase changes', async () => {
    const observe = async (url: string): Promise<Record<string, unknown>> => {
      const { test, pub } = clients(url);
      const seen: Record<string, unknown> = { before: await answer(url, 'eth_coinbase') };
      await test.setCoinbase({ address: COINBASE });
      seen.afterSet = await answer(url, 'eth_coinbase');
      await test.mine({ blocks: 1 });
      seen.minedBy = (await pub.getBlock()).miner;
      seen.afterMine = await answer(url, 'eth_coinbase');
      seen.withParam = await code(url, 'eth_coinbase', [1]);
      return seen;
    };
    const onAnvil = await observe(anvil.url);
    const onNode = await observe(t.node.url);
    expect(onNode).toEqual(onAnvil);
    expect(onNode).toEqual({ before: { result: ZERO }, afterSet: { result: COINBASE }, minedBy: COINBASE, afterMine: { result: COINBASE }, withParam: -32602 });
  });

  it("anvil_nodeInfo gives the head, the next block and the fork settings in anvil's shape; anvil_getGenesisTime the genesis timestamp", async () => {
    const observe = async (url: string): Promise<Record<string, unknown>> => {
      const { test, pub } = clients(url);
      await test.mine({ blocks: 1 });
      expect(await answer(url, 'anvil_setBlockGasLimit', [toHex(40_000_000)])).toEqual({ result: true });
      await test.setNextBlockBaseFeePerGas({ baseFeePerGas: 7n });
      await test.setRpcUrl('http://127.0.0.1:9'); // nothing to change: the fork settings stay null
      const info = (await rpc(url, 'anvil_nodeInfo')).result as Record<string, any>;
      const latest = await pub.getBlock();
      return {
        keys: Object.keys(info).sort(),
        head: {
          number: info.currentBlockNumber === toHex(latest.number),
          hash: info.currentBlockHash === latest.hash,
          timestamp: info.currentBlockTimestamp === Number(latest.timestamp),
        },
        hardFork: typeof info.hardFork,
        transactionOrder: info.transactionOrder,
        environment: { ...info.environment, gasPrice: info.environment.gasPrice === ((await answer(url, 'eth_gasPrice')) as { result: string }).result },
        forkConfig: info.forkConfig,
        withParam: await code(url, 'anvil_nodeInfo', [1]),
        genesisTime:
          ((await answer(url, 'anvil_getGenesisTime')) as { result: unknown }).result === Number((await pub.getBlock({ blockNumber: 0n })).timestamp),
      };
    };
    const onAnvil = await observe(anvil.url);
    const onNode = await observe(t.node.url);
    expect(onNode).toEqual(onAnvil);
    expect(onNode).toEqual({
      keys: ['currentBlockHash', 'currentBlockNumber', 'currentBlockTimestamp', 'environment', 'forkConfig', 'hardFork', 'transactionOrder'],
      head: { number: true, hash: true, timestamp: true },
      hardFork: 'string',
      transactionOrder: 'fees',
      environment: { baseFee: '0x7', chainId: 31337, gasLimit: toHex(40_000_000), gasPrice: true },
      forkConfig: { forkUrl: null, forkBlockNumber: null, forkRetryBackoff: null },
      withParam: -32602,
      genesisTime: true,
    });
    expect((await rpc(t.node.url, 'anvil_nodeInfo')).result.hardFork).toBe('Prague');
  });

  it('anvil_setLoggingEnabled and anvil_setRpcUrl answer null, anvil_setMinGasPrice is refused under EIP-1559, as on anvil', async () => {
    const observe = async (url: string): Promise<Record<string, unknown>> => {
      const { test } = clients(url);
      const refused = (p: Promise<unknown>) =>
        p.then(
          () => 'accepted',
          (e: { code?: number }) => e.code,
        );
      return {
        loggingOff: await test.setLoggingEnabled(false).then(() => 'done'),
        loggingOn: await answer(url, 'anvil_setLoggingEnabled', [true]),
        hardhatLogging: await answer(url, 'hardhat_setLoggingEnabled', [true]),
        loggingBad: await code(url, 'anvil_setLoggingEnabled', ['yes']),
        loggingMissing: await code(url, 'anvil_setLoggingEnabled', []),
        minGasPrice: await refused(test.setMinGasPrice({ gasPrice: parseGwei('20') })),
        minGasPriceAnswer: await answer(url, 'anvil_setMinGasPrice', ['0x1']),
        hardhatMinGasPrice: await answer(url, 'hardhat_setMinGasPrice', [1]),
        minGasPriceBad: await code(url, 'anvil_setMinGasPrice', ['ten']),
        rpcUrl: await test.setRpcUrl('http://127.0.0.1:9').then(() => 'done'),
        rpcUrlAnswer: await answer(url, 'anvil_setRpcUrl', ['not even a URL']),
        rpcUrlBad: await code(url, 'anvil_setRpcUrl', [5]),
      };
    };
    const onAnvil = await observe(anvil.url);
    const onNode = await observe(t.node.url);
    expect(onNode).toEqual(onAnvil);
    const eip1559 = { code: -32602, message: 'anvil_setMinGasPrice is not supported when EIP-1559 is active' };
    expect(onNode).toEqual({
      loggingOff: 'done',
      loggingOn: { result: null },
      hardhatLogging: { result: null },
      loggingBad: -32602,
      loggingMissing: -32602,
      minGasPrice: -32602,
      minGasPriceAnswer: eip1559,
      hardhatMinGasPrice: eip1559,
      minGasPriceBad: -32602,
      rpcUrl: 'done',
      rpcUrlAnswer: { result: null },
      rpcUrlBad: -32602,
    });
  });

  it('anvil_setTime moves the clock and answers how far forward; back in time stays after the parent here', async () => {
    const T = 2_100_000_000;
    const observe = async (url: string): Promise<Record<string, unknown>> => {
      const { test, pub } = clients(url);
      const now = Math.floor(Date.now() / 1000);
      const forward = (await answer(url, 'anvil_setTime', [T])) as { result: number };
      await test.mine({ blocks: 1 });
      const stamped = Number((await pub.getBlock()).timestamp);
      const back = await answer(url, 'evm_setTime', [toHex(T - 100)]);
      await test.mine({ blocks: 1 });
      return {
        forward: Math.abs(forward.result - (T - now)) <= 2,
        stamped: stamped >= T && stamped <= T + 2,
        back,
        afterBack: Number((await pub.getBlock()).timestamp) - stamped,
        missing: await code(url, 'anvil_setTime', []),
        bad: await code(url, 'anvil_setTime', ['soon']),
      };
    };
    const onAnvil = await observe(anvil.url);
    const onNode = await observe(t.node.url);
    const same = { forward: true, stamped: true, back: { result: 0 }, missing: -32602, bad: -32602 };
    // anvil stamps the next block back in time; this node keeps each block after its parent.
    expect(onAnvil).toEqual({ ...same, afterBack: -100 });
    expect(onNode).toEqual({ ...same, afterBack: 1 });
  });

  it("anvil_removePoolTransactions takes one sender's transactions out of the pool", async () => {
    const observe = async (url: string): Promise<Record<string, unknown>> => {
      const { pub } = clients(url);
      const status = async () => (await rpc(url, 'txpool_status')).result as { pending: string; queued: string };
      // Nonces past the next one wait in the pool (queued) on both nodes, mined or not.
      const queue = async (i: number, count: number) => {
        const account = devAccount(i);
        const wallet = createWalletClient({ chain: pub.chain, transport: http(url, { retryCount: 0 }), account });
        const next = await pub.getTransactionCount({ address: account.address, blockTag: 'pending' });
        for (let k = 1; k <= count; k++) await wallet.sendTransaction({ to: COINBASE, value: 1n, nonce: next + k, gas: 21_000n });
      };
      await queue(3, 2);
      await queue(4, 1);
      const before = await status();
      const answered = await answer(url, 'anvil_removePoolTransactions', [devAccount(3).address]);
      const after = await status();
      const left = Object.keys(((await rpc(url, 'txpool_content')).result as { queued: Record<string, unknown> }).queued).map((a) => a.toLowerCase());
      await answer(url, 'anvil_removePoolTransactions', [devAccount(4).address]);
      return { before, answered, after, left, end: await status(), bad: await code(url, 'anvil_removePoolTransactions', ['0x12']) };
    };
    const onAnvil = await observe(anvil.url);
    const onNode = await observe(t.node.url);
    expect(onNode).toEqual(onAnvil);
    expect(onNode).toEqual({
      before: { pending: '0x0', queued: '0x3' },
      answered: { result: null },
      after: { pending: '0x0', queued: '0x1' },
      left: [devAccount(4).address.toLowerCase()],
      end: { pending: '0x0', queued: '0x0' },
      bad: -32602,
    });
  });

  // Last in this block: it resets both chains.
  it('anvil_metadata (and hardhat_metadata) names the instance, the newest block and the live snapshots', async () => {
    const observe = async (url: string): Promise<Record<string, unknown>> => {
      const { test, pub } = clients(url);
      const metadata = async () => (await rpc(url, 'anvil_metadata')).result as Record<string, any>;
      await test.mine({ blocks: 1 });
      const id = await test.snapshot();
      const atSnapshot = await pub.getBlock();
      await test.mine({ blocks: 2 });
      const m = await metadata();
      const latest = await pub.getBlock();
      const before = m.instanceId;
      expect(await answer(url, 'anvil_reset')).toEqual({ result: null }); // viem's reset names a fork
      const afterReset = await metadata();
      return {
        keys: Object.keys(m).sort(),
        types: [typeof m.clientVersion, typeof m.clientSemver, typeof m.instanceId, m.instanceId.length],
        chainId: m.chainId,
        latest: m.latestBlockNumber === Number(latest.number) && m.latestBlockHash === latest.hash,
        forkedNetwork: m.forkedNetwork,
        snapshots: m.snapshots,
        expectedSnapshots: { [id]: [Number(atSnapshot.number), atSnapshot.hash] },
        hardhat: (await rpc(url, 'hardhat_metadata')).result.instanceId === afterReset.instanceId,
        newInstance: afterReset.instanceId !== before,
        afterReset: afterReset.latestBlockNumber,
        withParam: await code(url, 'anvil_metadata', [1]),
      };
    };
    const onAnvil = await observe(anvil.url);
    const onNode = await observe(t.node.url);
    expect(onNode.snapshots).toEqual(onNode.expectedSnapshots);
    expect(onAnvil.snapshots).toEqual(onAnvil.expectedSnapshots);
    const { snapshots: _n, expectedSnapshots: _ne, ...node } = onNode;
    const { snapshots: _a, expectedSnapshots: _ae, ...reference } = onAnvil;
    expect(node).toEqual(reference);
    expect(node).toMatchObject({ chainId: 31337, latest: true, forkedNetwork: null, hardhat: true, newInstance: true, afterReset: 0, withParam: -32602 });
    const m = (await rpc(t.node.url, 'anvil_metadata')).result;
    expect({ clientVersion: m.clientVersion, clientCommitSha: m.clientCommitSha, snapshots: m.snapshots }).toEqual({
      clientVersion: (await rpc(t.node.url, 'web3_clientVersion')).result,
      clientCommitSha: null,
      snapshots: {},
    });
  });
});

describe('beyond the dev chain', () => {
  it('eth_coinbase is served without --dev; anvil_nodeInfo and the settings are not', async () => {
    await withTestNode({ configure: (c) => void (c.chain.dev = false) }, async (t) => {
      expect(await answer(t.node.url, 'eth_coinbase')).toEqual({ result: ZERO });
      for (const method of [
        'anvil_nodeInfo',
        'anvil_metadata',
        'anvil_getGenesisTime',
        'anvil_setTime',
        'anvil_removePoolTransactions',
        'anvil_setLoggingEnabled',
        'anvil_setMinGasPrice',
        'anvil_setRpcUrl',
      ]) {
        expect(await code(t.node.url, method, [])).toBe(-32601);
      }
    });
  });

  it('with --no-preconf eth_coinbase follows anvil_setCoinbase before any block shows it', async () => {
    await withTestNode({ configure: (c) => void ((c.chain.preconf = false), (c.chain.blockTimeMs = 60_000)) }, async (t) => {
      await clients(t.node.url).test.setCoinbase({ address: COINBASE });
      expect(await answer(t.node.url, 'eth_coinbase')).toEqual({ result: COINBASE });
      expect((await t.publicClient.getBlock()).miner).toBe(ZERO);
    });
  });

  it('before London anvil_setMinGasPrice is refused naming why, and anvil_nodeInfo has no base fee', async () => {
    const genesis = testGenesis('london') as { config: Record<string, unknown>; baseFeePerGas?: string };
    delete genesis.config.londonBlock;
    delete genesis.baseFeePerGas;
    await withTestNode({ configure: (c) => void ((c.chain.genesis = JSON.stringify(genesis)), (c.chain.dev = true)) }, async (t) => {
      expect(await answer(t.node.url, 'anvil_setMinGasPrice', ['0x1'])).toEqual({
        code: -32602,
        message: 'anvil_setMinGasPrice is not supported on this node: it keeps no minimum gas price to set',
      });
      const info = (await rpc(t.node.url, 'anvil_nodeInfo')).result;
      expect({ hardFork: info.hardFork, baseFee: info.environment.baseFee }).toEqual({ hardFork: 'Berlin', baseFee: '0x0' });
    });
  });
});
