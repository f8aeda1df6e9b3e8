// eth_simulateV1 against the real server: viem's simulateBlocks / simulateCalls where viem
// covers the feature, raw JSON-RPC where a test needs the wire shape or an error code.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  concat,
  decodeFunctionResult,
  encodeErrorResult,
  encodeFunctionData,
  keccak256,
  pad,
  parseAbi,
  parseGwei,
  parseSignature,
  serializeTransaction,
  toHex,
  toRlp,
  type Address,
  type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { contract } from '../helpers/contracts.js';
import { HOLDER, PROBE, TOKEN, balanceSlot, testGenesis } from '../helpers/genesis.js';
import { headerHash } from '../helpers/header.js';
import { devAccount, rpc, startTestNode, withTestNode, type TestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

const RELAY = '0x00000000000000000000000000000000000073e1' as Address;
const ECRECOVER = '0x0000000000000000000000000000000000000001' as Address;
const SHA256 = '0x0000000000000000000000000000000000000002' as Address;
const MOVED = '0x0000000000000000000000000000000000123456' as Address;
const ETH_TOKEN = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
const TRANSFER_TOPIC = keccak256(toHex('Transfer(address,address,uint256)'));
const ZERO_HASH = pad('0x0');
/** Block time of the suite's node: long, so `latest` and `pending` stay apart while a test runs. */
const BLOCK_TIME_S = 60;

const probe = contract('Probe');
const relay = contract('Relay');
const token = contract('Token');

const fresh = (): Address => privateKeyToAccount(generatePrivateKey()).address;
const word = (a: Address): Hex => pad(a.toLowerCase() as Hex);
const probeCall = (functionName: string, args: unknown[] = []): Hex =>
  encodeFunctionData({ abi: probe.abi, functionName, args } as Parameters<typeof encodeFunctionData>[0]);

function genesis(): string {
  const funded = Object.fromEntries([1, 2, 3, 4].map((i) => [devAccount(i).address, { balance: toHex(10n ** 22n) }]));
  return JSON.stringify(testGenesis('prague', { ...funded, [RELAY]: { balance: '0x0', code: relay.runtime } }));
}

/** eth_simulateV1 over raw JSON-RPC: `{ result }` or `{ error }`. */
async function simulate(t: TestNode, payload: Record<string, unknown>, block: unknown = 'latest'): Promise<any> {
  return rpc(t.node.url, 'eth_simulateV1', block === undefined ? [payload] : [payload, block]);
}

function transferLog(from: Address, to: Address, value: bigint) {
  return { address: ETH_TOKEN, topics: [TRANSFER_TOPIC, word(from), word(to)], data: pad(toHex(value)) };
}

describe('eth_simulateV1', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({
      configure: (c) => {
        c.chain.genesis = genesis();
        c.chain.blockTimeMs = BLOCK_TIME_S * 1000;
        c.chain.preconfIntervalMs = 100;
      },
    });
  });
  afterAll(() => t?.stop());

  it('reports value transfers as Transfer logs from 0xEeee…EEeE, in execution order among the other logs', async () => {
    const sender = devAccount(1).address;
    const [a, b] = [fresh(), fresh()];
    const calls = [
      { to: a, value: 1000n },
      { to: RELAY, abi: relay.abi, functionName: 'relay', args: [[a, b]], value: 10n },
      // The inner transfer to Probe (no receive function) reverts and leaves no log.
      { to: RELAY, abi: relay.abi, functionName: 'tryRelay', args: [PROBE], value: 7n },
    ] as const;
    const traced = await t.publicClient.simulateCalls({ account: sender, calls, traceTransfers: true });
    const shape = (logs: { address: string; topics: readonly Hex[]; data: Hex }[] | undefined) =>
      (logs ?? []).map((l) => ({ address: l.address.toLowerCase(), topics: l.topics, data: l.data }));
    const relayed = (to: Address, value: bigint) => ({
      address: RELAY.toLowerCase(),
      topics: [keccak256(toHex('Relayed(address,uint256)')), word(to)],
      data: pad(toHex(value)),
    });
    expect(shape(traced.results[0]!.logs)).toEqual([transferLog(sender, a, 1000n)]);
    expect(shape(traced.results[1]!.logs)).toEqual([
      transferLog(sender, RELAY, 10n),
      relayed(a, 5n),
      transferLog(RELAY, a, 5n),
      relayed(b, 5n),
      transferLog(RELAY, b, 5n),
    ]);
    expect(shape(traced.results[2]!.logs)).toEqual([transferLog(sender, RELAY, 7n), relayed(PROBE, 0n)]);
    // Log indices run across the block's calls; gas fees are no transfers.
    const indices = traced.results.flatMap((r) => (r.logs ?? []).map((l) => l.logIndex));
    expect(indices).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);

    const plain = await t.publicClient.simulateCalls({ account: sender, calls });
    expect(shape(plain.results[0]!.logs)).toEqual([]);
    expect(shape(plain.results[1]!.logs)).toEqual([relayed(a, 5n), relayed(b, 5n)]);
  });

  it('a transfer that reverts leaves no transfer log, and the block carries the call in full', async () => {
    const sender = fresh();
    const r = await simulate(t, {
      blockStateCalls: [
        {
          stateOverrides: { [sender]: { balance: '0x100' } },
          calls: [{ from: sender, to: RELAY, value: '0x10', input: encodeFunctionData({ abi: relay.abi, functionName: 'relay', args: [[PROBE]] }) }],
        },
      ],
      traceTransfers: true,
    });
    const call = r.result[0].calls[0];
    expect(call.status).toBe('0x0');
    expect(call.logs).toEqual([]);
    expect(call.error).toEqual({
      code: 3,
      message: 'execution reverted: relay failed',
      data: encodeErrorResult({ abi: parseAbi(['error Error(string)']), errorName: 'Error', args: ['relay failed'] }),
    });
  });

  it('reads overridden storage, and state carries from block to block', async () => {
    const blocks = await t.publicClient.simulateBlocks({
      blocks: [
        {
          stateOverrides: [{ address: PROBE, stateDiff: [{ slot: ZERO_HASH, value: pad('0x29') }] }],
          calls: [
            { to: PROBE, abi: probe.abi, functionName: 'counter' },
            { to: PROBE, abi: probe.abi, functionName: 'bump' },
          ],
        },
        {
          // `state` replaces all storage: the holder's balance slot reads zero.
          stateOverrides: [{ address: TOKEN, state: [{ slot: pad('0x5'), value: pad('0x1') }] }],
          calls: [
            { to: PROBE, abi: probe.abi, functionName: 'counter' },
            { to: TOKEN, abi: token.abi, functionName: 'balanceOf', args: [HOLDER] },
          ],
        },
      ],
    });
    expect(blocks[0]!.calls.map((c) => c.result)).toEqual([41n, 42n]);
    expect(blocks[0]!.calls[1]!.logs).toHaveLength(1);
    expect(blocks[1]!.calls.map((c) => c.result)).toEqual([42n, 0n]);
    // Nothing was committed.
    expect(await t.publicClient.readContract({ address: PROBE, abi: probe.abi, functionName: 'counter' })).toBe(0n);
    expect(await t.publicClient.getStorageAt({ address: TOKEN, slot: balanceSlot(HOLDER) })).not.toBe(ZERO_HASH);
  });

  it('moves ecrecover: the new address recovers, the old one is a plain account, the next block has it back', async () => {
    const signer = devAccount(3);
    const hash = keccak256(toHex('eth_simulateV1'));
    const { r, s, v } = parseSignature(await signer.sign({ hash }));
    const input = concat([hash, pad(toHex(v!)), r, s]);
    const res = await simulate(t, {
      blockStateCalls: [
        {
          stateOverrides: { [ECRECOVER]: { movePrecompileToAddress: MOVED } },
          calls: [
            { to: MOVED, input },
            { to: ECRECOVER, input },
          ],
        },
        {
          calls: [
            { to: ECRECOVER, input },
            { to: MOVED, input },
          ],
        },
      ],
    });
    const [first, second] = res.result;
    expect(first.calls[0].returnData).toBe(word(signer.address));
    expect(first.calls[1]).toMatchObject({ status: '0x1', returnData: '0x' });
    expect(second.calls[0].returnData).toBe(word(signer.address));
    expect(second.calls[1].returnData).toBe('0x');
    // A precompile whose address gets code is replaced by that code.
    const coded = await simulate(t, {
      blockStateCalls: [{ stateOverrides: { [SHA256]: { code: probe.runtime } }, calls: [{ to: SHA256, input: probeCall('counter') }] }],
    });
    expect(coded.result[0].calls[0].returnData).toBe(ZERO_HASH);
  });

  it('block overrides are what block.number, block.timestamp and block.basefee see', async () => {
    const head = await t.publicClient.getBlock();
    const number = head.number + 1n;
    const time = head.timestamp + 1000n;
    const [block] = await t.publicClient.simulateBlocks({
      blocks: [
        {
          blockOverrides: { number, time, baseFeePerGas: 7n, feeRecipient: HOLDER, gasLimit: 40_000_000n, prevRandao: 42n },
          calls: [{ to: PROBE, abi: probe.abi, functionName: 'context' }],
        },
      ],
    });
    expect(block!.calls[0]!.result).toEqual([number, time, 7n, 31337n]);
    expect(block!.number).toBe(number);
    expect(block!.timestamp).toBe(time);
    expect(block!.baseFeePerGas).toBe(7n);
    expect(block!.miner.toLowerCase()).toBe(HOLDER.toLowerCase());
    expect(block!.gasLimit).toBe(40_000_000n);
    expect(block!.mixHash).toBe(pad('0x2a'));
  });

  it('fills gaps between block numbers with empty blocks; time advances by the block time', async () => {
    const head = await t.publicClient.getBlock();
    const data = probeCall('context');
    const res = await simulate(t, {
      blockStateCalls: [{ calls: [{ to: PROBE, input: data }] }, { blockOverrides: { number: toHex(head.number + 4n) }, calls: [{ to: PROBE, input: data }] }],
    });
    const blocks = res.result as any[];
    expect(blocks.map((b) => BigInt(b.number))).toEqual([1n, 2n, 3n, 4n].map((i) => head.number + i));
    expect(blocks.map((b) => BigInt(b.timestamp) - head.timestamp)).toEqual([1n, 2n, 3n, 4n].map((i) => i * BigInt(BLOCK_TIME_S)));
    expect(blocks.map((b) => b.calls.length)).toEqual([1, 0, 0, 1]);
    const [n, ts] = decodeFunctionResult({ abi: probe.abi, functionName: 'context', data: blocks[3].calls[0].returnData }) as bigint[];
    expect([n, ts]).toEqual([BigInt(blocks[3].number), BigInt(blocks[3].timestamp)]);
    for (let i = 1; i < blocks.length; i++) expect(blocks[i].parentHash).toBe(blocks[i - 1].hash);
  });

  it('BLOCKHASH sees the simulated blocks, whose hashes are real header hashes', async () => {
    const head = await t.publicClient.getBlock();
    const res = await simulate(t, {
      blockStateCalls: [
        { calls: [] },
        {
          calls: [
            { to: PROBE, input: probeCall('blockHashOf', [head.number + 1n]) },
            { to: PROBE, input: probeCall('blockHashOf', [head.number]) },
          ],
        },
      ],
    });
    const [first, second] = res.result;
    expect(second.calls[0].returnData).toBe(first.hash);
    expect(second.calls[1].returnData).toBe(head.hash);
    expect(first.parentHash).toBe(head.hash);
    for (const b of res.result) {
      expect(headerHash(b)).toBe(b.hash);
      expect(b.stateRoot).toBe(ZERO_HASH);
    }
    expect(first.transactionsRoot).toBe('0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421');
  });

  it('a revert is a failed call with code 3 and its data, inside a successful response; halts are -32015', async () => {
    const INVALID = fresh();
    const res = await simulate(t, {
      blockStateCalls: [
        {
          calls: [
            { to: PROBE, input: probeCall('fail', ['nope']) },
            { to: PROBE, input: probeCall('failCustom', [7n]) },
            { to: PROBE, input: probeCall('bump') },
            { to: PROBE, input: probeCall('burn'), gas: toHex(100_000) },
            { to: INVALID },
          ],
          stateOverrides: { [INVALID]: { code: '0xfe' } },
        },
      ],
    });
    expect(res.error).toBeUndefined();
    const calls = res.result[0].calls;
    expect(calls[0]).toMatchObject({
      status: '0x0',
      returnData: '0x',
      logs: [],
      error: {
        code: 3,
        message: 'execution reverted: nope',
        data: encodeErrorResult({ abi: parseAbi(['error Error(string)']), errorName: 'Error', args: ['nope'] }),
      },
    });
    expect(calls[1].error).toEqual({
      code: 3,
      message: 'execution reverted',
      data: encodeErrorResult({ abi: probe.abi, errorName: 'Custom', args: [7n] }),
    });
    expect(calls[2]).toMatchObject({ status: '0x1', returnData: pad('0x1') });
    expect(calls[2].error).toBeUndefined();
    expect(calls[3]).toMatchObject({ status: '0x0', gasUsed: toHex(100_000), error: { code: -32015, message: 'out of gas' } });
    expect(calls[4].error).toEqual({ code: -32015, message: 'invalid opcode' });
    expect(BigInt(calls[0].maxUsedGas)).toBeGreaterThanOrEqual(BigInt(calls[0].gasUsed));

    // viem decodes the revert from the simulated block.
    const [block] = await t.publicClient.simulateBlocks({
      blocks: [{ calls: [{ to: PROBE, abi: probe.abi, functionName: 'fail', args: ['nope'] }] }],
    });
    expect(block!.calls[0]!.status).toBe('failure');
    expect(block!.calls[0]!.error?.message).toContain('nope');
  });

  it('returns full transactions: typed by their fields, hashed unsigned (v = r = s = 0), gas and nonce defaulted', async () => {
    const res = await simulate(t, {
      blockStateCalls: [
        {
          blockOverrides: { gasLimit: toHex(100_000_000) },
          calls: [
            { from: HOLDER, to: PROBE, maxFeePerGas: toHex(parseGwei('10')), input: probeCall('bump') },
            { from: HOLDER, to: fresh(), value: '0x1', maxFeePerGas: toHex(parseGwei('10')), maxPriorityFeePerGas: '0x1' },
            { from: HOLDER, to: fresh(), gasPrice: toHex(parseGwei('10')), value: '0x2' },
          ],
        },
      ],
      validation: true,
      returnFullTransactions: true,
    });
    expect(res.error).toBeUndefined();
    const block = res.result[0];
    const [a, b, c] = block.transactions;
    // The nonce follows the sender's nonce in the simulation (HOLDER starts at 7).
    expect([a.nonce, b.nonce, c.nonce]).toEqual(['0x7', '0x8', '0x9']);
    // gas: what is left in the block, within the request-wide 50M budget.
    const used0 = BigInt(block.calls[0].gasUsed);
    expect(BigInt(a.gas)).toBe(50_000_000n);
    expect(BigInt(b.gas)).toBe(50_000_000n - used0);
    expect([a.type, b.type, c.type]).toEqual(['0x2', '0x2', '0x0']);
    expect(c.v).toBe('0x0');
    expect(c.chainId).toBeUndefined();
    expect(a.from.toLowerCase()).toBe(HOLDER.toLowerCase());
    for (const tx of [a, b, c]) expect(tx.blockHash).toBe(block.hash);
    // Recompute the hashes independently.
    const dynamic = (tx: any) =>
      keccak256(
        serializeTransaction(
          {
            type: 'eip1559',
            chainId: 31337,
            nonce: Number(tx.nonce),
            to: tx.to,
            value: BigInt(tx.value),
            gas: BigInt(tx.gas),
            maxFeePerGas: BigInt(tx.maxFeePerGas),
            maxPriorityFeePerGas: BigInt(tx.maxPriorityFeePerGas),
            data: tx.input,
            accessList: [],
          },
          { r: '0x0', s: '0x0', yParity: 0 },
        ),
      );
    expect(dynamic(a)).toBe(a.hash);
    expect(dynamic(b)).toBe(b.hash);
    const int = (q: Hex): Hex => (BigInt(q) === 0n ? '0x' : toHex(BigInt(q)));
    const legacy = keccak256(toRlp([int(c.nonce), int(c.gasPrice), int(c.gas), c.to, int(c.value), c.input, '0x', '0x', '0x']));
    expect(legacy).toBe(c.hash);
    // With validation the base fee follows EIP-1559 from the parent; without it is 0.
    const head = await t.publicClient.getBlock();
    expect(BigInt(block.baseFeePerGas)).toBeGreaterThan(0n);
    expect(BigInt(block.baseFeePerGas)).toBeLessThanOrEqual((head.baseFeePerGas! * 9n) / 8n + 1n);
    const free = await simulate(t, { blockStateCalls: [{ calls: [{ from: HOLDER, to: PROBE }] }] });
    expect(free.result[0].baseFeePerGas).toBe('0x0');
    expect(headerHash(block)).toBe(block.hash);
    expect(block.withdrawals).toEqual([]);
    expect(block.uncles).toEqual([]);
  });

  it('answers each request-level failure with its code', async () => {
    const head = await t.publicClient.getBlock();
    const poor = fresh();
    const fee = toHex(parseGwei('100'));
    const cases: [string, Record<string, unknown>, number][] = [
      ['nonce too low', { blockStateCalls: [{ calls: [{ from: HOLDER, to: PROBE, nonce: '0x0', maxFeePerGas: fee }] }], validation: true }, -38010],
      ['nonce too high', { blockStateCalls: [{ calls: [{ from: HOLDER, to: PROBE, nonce: '0x64', maxFeePerGas: fee }] }], validation: true }, -38011],
      ['base fee too low', { blockStateCalls: [{ calls: [{ from: HOLDER, to: PROBE }] }], validation: true }, -38012],
      [
        'base fee too low (overridden base fee, no validation)',
        { blockStateCalls: [{ blockOverrides: { baseFeePerGas: '0x64' }, calls: [{ from: HOLDER, to: PROBE, maxFeePerGas: '0x63' }] }] },
        -38012,
      ],
      ['intrinsic gas too low', { blockStateCalls: [{ calls: [{ from: HOLDER, to: PROBE, gas: toHex(20_999) }] }] }, -38013],
      ['insufficient funds', { blockStateCalls: [{ calls: [{ from: poor, to: PROBE, value: '0x1' }] }] }, -38014],
      ['insufficient funds with validation', { blockStateCalls: [{ calls: [{ from: poor, to: PROBE, maxFeePerGas: fee }] }], validation: true }, -38014],
      [
        'block gas limit exceeded',
        { blockStateCalls: [{ blockOverrides: { gasLimit: toHex(100_000) }, calls: [{ from: HOLDER, to: PROBE, gas: toHex(100_001) }] }] },
        -38015,
      ],
      [
        'block numbers not increasing',
        { blockStateCalls: [{ blockOverrides: { number: toHex(head.number + 2n) } }, { blockOverrides: { number: toHex(head.number + 2n) } }] },
        -38020,
      ],
      ['block number not after the base', { blockStateCalls: [{ blockOverrides: { number: toHex(head.number) } }] }, -38020],
      [
        'timestamps not increasing',
        { blockStateCalls: [{ blockOverrides: { time: toHex(head.timestamp + 100n) } }, { blockOverrides: { time: toHex(head.timestamp + 100n) } }] },
        -38021,
      ],
      ['precompile moved onto itself', { blockStateCalls: [{ stateOverrides: { [ECRECOVER]: { movePrecompileToAddress: ECRECOVER } } }] }, -38022],
      [
        'two precompiles moved to one address',
        { blockStateCalls: [{ stateOverrides: { [ECRECOVER]: { movePrecompileToAddress: MOVED }, [SHA256]: { movePrecompileToAddress: MOVED } } }] },
        -38023,
      ],
      ['too many blocks', { blockStateCalls: [{ blockOverrides: { number: toHex(head.number + 257n) } }] }, -38026],
      ['not a precompile', { blockStateCalls: [{ stateOverrides: { [PROBE]: { movePrecompileToAddress: MOVED } } }] }, -32000],
      ['empty input', { blockStateCalls: [] }, -32602],
      ['both state and stateDiff', { blockStateCalls: [{ stateOverrides: { [PROBE]: { state: {}, stateDiff: {} } } }] }, -32602],
      ['bad hex', { blockStateCalls: [{ calls: [{ to: PROBE, input: '0xzz' }] }] }, -32602],
      ['unknown payload field', { blockStateCalls: [{}], traceTransfer: true }, -32602],
      ['unknown block field', { blockStateCalls: [{ call: [] }] }, -32602],
      ['unknown override field', { blockStateCalls: [{ stateOverrides: { [PROBE]: { balanc: '0x1' } } }] }, -32602],
    ];
    for (const [name, payload, code] of cases) {
      const r = await simulate(t, payload);
      expect({ name, code: r.error?.code }).toEqual({ name, code });
      expect(r.error.message.length).toBeGreaterThan(0);
    }
    // A future block is not found; blockParameter defaults to latest.
    expect((await simulate(t, { blockStateCalls: [{}] }, toHex(head.number + 100n))).error.code).toBe(-32000);
    const defaulted = await simulate(t, { blockStateCalls: [{}] }, undefined);
    expect(BigInt(defaulted.result[0].number)).toBeGreaterThan(head.number);
  });

  it('spends a request-wide gas budget of 50M across blocks', async () => {
    const res = await simulate(t, {
      blockStateCalls: [
        { blockOverrides: { gasLimit: toHex(100_000_000) }, calls: [{ to: PROBE, input: probeCall('burn') }] },
        { calls: [{ to: PROBE, input: probeCall('counter') }] },
      ],
    });
    expect(res.error).toMatchObject({ code: -38026 });
  });

  it('pending simulates on top of the newest pre-confirmation', async () => {
    const wallet = t.wallet(4);
    const hash = await wallet.writeContract({ address: PROBE, abi: probe.abi, functionName: 'bump', chain: t.chain, account: devAccount(4) });
    // Pre-confirmed long before the block is sealed (60 s blocks).
    const status = async () => (await rpc(t.node.url, 'preconf_transactionStatus', [hash])).result.status as string;
    await waitFor(async () => (await status()) === 'preconfirmed', 4_000, 'the bump to be pre-confirmed');
    const pending = await t.publicClient.getBlock({ blockTag: 'pending' });
    expect(pending.transactions).toContain(hash);
    const read = { calls: [{ to: PROBE, abi: probe.abi, functionName: 'counter' }] } as const;
    const [onPending] = await t.publicClient.simulateBlocks({ blockTag: 'pending', blocks: [read] });
    const [onLatest] = await t.publicClient.simulateBlocks({ blockTag: 'latest', blocks: [read] });
    expect(onPending!.calls[0]!.result).toBe(1n);
    expect(onLatest!.calls[0]!.result).toBe(0n);
    // The block being built is the parent: number, timestamp; it has no hash yet.
    expect(onPending!.number).toBe(pending.number! + 1n);
    expect(onPending!.timestamp).toBe(pending.timestamp + BigInt(BLOCK_TIME_S));
    expect(onPending!.parentHash).toBe(ZERO_HASH);
    // The sender's next nonce in the simulation follows its pre-confirmed transaction.
    const full = await simulate(t, { blockStateCalls: [{ calls: [{ from: devAccount(4).address, to: PROBE }] }], returnFullTransactions: true }, 'pending');
    expect(full.result[0].transactions[0].nonce).toBe('0x1');
  });
});

describe('eth_simulateV1 limits', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({
      configure: (c) => {
        c.chain.genesis = genesis();
        c.chain.simulateMaxBlocks = 4;
        c.chain.simulateMaxCallsPerBlock = 2;
        c.chain.simulateMaxCalls = 3;
        c.chain.simulateTimeoutMs = 100;
        c.chain.gasCap = 4_000_000_000;
      },
    });
  });
  afterAll(() => t?.stop());

  it('refuses requests past the configured limits with -38026', async () => {
    const call = { to: PROBE };
    const head = await t.publicClient.getBlockNumber();
    for (const payload of [
      { blockStateCalls: [{}, {}, {}, {}, {}] },
      { blockStateCalls: [{ blockOverrides: { number: toHex(head + 5n) } }] },
      { blockStateCalls: [{ calls: [call, call, call] }] },
      { blockStateCalls: [{ calls: [call, call] }, { calls: [call, call] }] },
    ]) {
      expect((await simulate(t, payload)).error?.code).toBe(-38026);
    }
    expect((await simulate(t, { blockStateCalls: [{}, {}, {}, {}] })).result).toHaveLength(4);
  });

  it('stops at the wall-clock timeout with -32016', async () => {
    const started = Date.now();
    const r = await simulate(t, {
      blockStateCalls: [{ blockOverrides: { gasLimit: toHex(4_000_000_000) }, calls: [{ to: PROBE, input: probeCall('burn') }] }],
    });
    expect(r.error?.code).toBe(-32016);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe('eth_simulateV1 without pre-confirmations', () => {
  it('is method-not-found', async () => {
    await withTestNode({ configure: (c) => void (c.chain.preconf = false) }, async (t) => {
      expect((await simulate(t, { blockStateCalls: [{}] })).error.code).toBe(-32601);
    });
  });
});
