// The node runs. Real server on loopback, real addon, viem as the client.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BaseError,
  ExecutionRevertedError,
  RpcRequestError,
  decodeFunctionResult,
  encodeErrorResult,
  encodeFunctionData,
  pad,
  parseAbi,
  toHex,
  type Hex,
} from 'viem';
import { contract } from '../helpers/contracts.js';
import { balanceSlot, HOLDER, PROBE, testGenesis, TOKEN } from '../helpers/genesis.js';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { devAccount, rawPost, rpc, startTestNode, type TestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

const TEN_THOUSAND_ETH = 10_000n * 10n ** 18n;

describe('dev chain', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode();
  });
  afterAll(() => t?.stop());

  it('funds the ten well-known dev accounts', async () => {
    for (let i = 0; i < 10; i++) {
      expect(await t.publicClient.getBalance({ address: devAccount(i).address })).toBe(TEN_THOUSAND_ETH);
    }
    expect(await t.publicClient.getBalance({ address: '0x000000000000000000000000000000000000dEaD' })).toBe(0n);
  });

  it('answers the chain basics clients ask first', async () => {
    expect(await t.publicClient.getChainId()).toBe(31337);
    expect((await rpc(t.node.url, 'net_version')).result).toBe('31337');
    expect((await rpc(t.node.url, 'web3_clientVersion')).result).toMatch(/^preconf-node\/v\d/);
    const genesis = await t.publicClient.getBlock({ blockNumber: 0n });
    expect(genesis.number).toBe(0n);
    expect(genesis.gasLimit).toBe(30_000_000n);
    expect(genesis.baseFeePerGas).toBe(1_000_000_000n);
    expect(genesis.parentHash).toBe(pad('0x0'));
    const byHash = await t.publicClient.getBlock({ blockHash: genesis.hash! });
    expect(byHash.hash).toBe(genesis.hash);
    expect(byHash.stateRoot).toBe(genesis.stateRoot);
    const full = await t.publicClient.getBlock({ blockNumber: 0n, includeTransactions: true });
    expect(full.transactions).toEqual([]);
    expect(await t.publicClient.getBlockNumber()).toBeGreaterThanOrEqual(0n);
    expect((await rpc(t.node.url, 'eth_getBlockByNumber', ['0xffffff', false])).result).toBeNull();
  });

  it('has the system contracts Cancun and Prague blocks call', async () => {
    for (const a of [
      '0x000F3df6D732807Ef1319fB7B8bB8522d0Beac02',
      '0x0000F90827F1C53a10cb7A02335B175320002935',
      '0x00000961Ef480Eb55e80D19ad83579A64c007002',
      '0x0000BBdDc7CE488642fb579F8B00f3a590007251',
    ] as const) {
      expect((await t.publicClient.getCode({ address: a }))?.length).toBeGreaterThan(10);
    }
  });

  it('serves GET /health', async () => {
    const res = await fetch(`${t.node.url}/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: string; chainId: number };
    expect(body.status).toBe('ok');
    expect(body.chainId).toBe(31337);
  });
});

describe('contracts in genesis', () => {
  let t: TestNode;
  const token = contract('Token');
  const probe = contract('Probe');
  beforeAll(async () => {
    t = await startTestNode({ configure: (c) => void (c.chain.genesis = JSON.stringify(testGenesis())) });
  });
  afterAll(() => t?.stop());

  it('eth_call reads an ERC-20 balance from genesis storage', async () => {
    const balance = await t.publicClient.readContract({ address: TOKEN, abi: token.abi, functionName: 'balanceOf', args: [HOLDER] });
    expect(balance).toBe(1_000_000n * 10n ** 18n);
    const none = await t.publicClient.readContract({ address: TOKEN, abi: token.abi, functionName: 'balanceOf', args: [PROBE] });
    expect(none).toBe(0n);
    expect(await t.publicClient.getTransactionCount({ address: HOLDER })).toBe(7);
  });

  it('eth_getCode and eth_getStorageAt read genesis state', async () => {
    expect(await t.publicClient.getCode({ address: TOKEN })).toBe(token.runtime);
    expect(await t.publicClient.getCode({ address: HOLDER })).toBeUndefined(); // viem maps 0x to undefined
    expect((await rpc(t.node.url, 'eth_getCode', [HOLDER, 'latest'])).result).toBe('0x');
    const slot = balanceSlot(HOLDER);
    const expected = pad(toHex(1_000_000n * 10n ** 18n));
    expect(await t.publicClient.getStorageAt({ address: TOKEN, slot })).toBe(expected);
    // Slot as a hex quantity or as 32 bytes; the result is always 32 bytes.
    expect((await rpc(t.node.url, 'eth_getStorageAt', [TOKEN, '0x1', 'latest'])).result).toBe(expected);
    expect((await rpc(t.node.url, 'eth_getStorageAt', [TOKEN, pad('0x1'), 'latest'])).result).toBe(expected);
    expect((await rpc(t.node.url, 'eth_getStorageAt', [TOKEN, '0x5', 'latest'])).result).toBe(pad('0x0'));
  });

  it('eth_call revert carries -32000, the reason and the revert data', async () => {
    const data = encodeFunctionData({ abi: probe.abi, functionName: 'fail', args: ['nope'] });
    const r = await rpc(t.node.url, 'eth_call', [{ to: PROBE, data }, 'latest']);
    expect(r.error.code).toBe(-32000);
    expect(r.error.message).toBe('execution reverted: nope');
    expect(r.error.data).toBe(encodeErrorResult({ abi: parseAbi(['error Error(string)']), errorName: 'Error', args: ['nope'] }));
    // viem decodes it.
    const err = await t.publicClient.readContract({ address: PROBE, abi: probe.abi, functionName: 'fail', args: ['nope'] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BaseError);
    const reverted = (err as BaseError).walk((e) => e instanceof ExecutionRevertedError) as ExecutionRevertedError;
    expect(reverted.shortMessage).toBe('Execution reverted with reason: nope.');
    const raw = (err as BaseError).walk((e) => e instanceof RpcRequestError) as RpcRequestError;
    expect(raw.data).toBe(r.error.data);
  });

  it('custom errors, panics and halts are reported clearly', async () => {
    const custom = await rpc(t.node.url, 'eth_call', [
      { to: PROBE, data: encodeFunctionData({ abi: probe.abi, functionName: 'failCustom', args: [7n] }) },
      'latest',
    ]);
    expect(custom.error).toMatchObject({ code: -32000, message: 'execution reverted' });
    expect(custom.error.data).toBe(encodeErrorResult({ abi: probe.abi, errorName: 'Custom', args: [7n] }));
    const panic = await rpc(t.node.url, 'eth_call', [{ to: PROBE, data: encodeFunctionData({ abi: probe.abi, functionName: 'failAssert' }) }, 'latest']);
    expect(panic.error).toMatchObject({ code: -32000, message: 'execution reverted: assert(false)' });
    const oog = await rpc(t.node.url, 'eth_call', [
      { to: PROBE, gas: '0x30d40', data: encodeFunctionData({ abi: probe.abi, functionName: 'burn' }) },
      'latest',
    ]);
    expect(oog.error).toEqual({ code: -32000, message: 'out of gas' });
    const invalid = await rpc(t.node.url, 'eth_call', [{ to: PROBE, data: '0xdeadbeef' }, 'latest']);
    expect(invalid.error.code).toBe(-32000);
    expect(invalid.error.message).toBe('execution reverted');
  });

  it('eth_call without gas gets the documented cap, and accepts input as an alias of data', async () => {
    const data = encodeFunctionData({ abi: token.abi, functionName: 'balanceOf', args: [HOLDER] });
    const a = await rpc(t.node.url, 'eth_call', [{ to: TOKEN, input: data }, 'latest']);
    const b = await rpc(t.node.url, 'eth_call', [{ to: TOKEN, data, input: data }, 'latest']);
    expect(a.result).toBe(b.result);
    const both = await rpc(t.node.url, 'eth_call', [{ to: TOKEN, data, input: '0x00' }, 'latest']);
    expect(both.error.code).toBe(-32602);
    // A loop burns whatever it is given: the 50M default cap shows up as the gas used by estimate-free call.
    const burn = await rpc(t.node.url, 'eth_call', [{ to: PROBE, data: encodeFunctionData({ abi: probe.abi, functionName: 'burn' }) }, 'latest']);
    expect(burn.error.message).toBe('out of gas');
  });

  it('eth_call applies state overrides: balance, code, state and stateDiff', async () => {
    const data = encodeFunctionData({ abi: token.abi, functionName: 'balanceOf', args: [HOLDER] });
    const slot = balanceSlot(HOLDER);
    const diff = await rpc(t.node.url, 'eth_call', [{ to: TOKEN, data }, 'latest', { [TOKEN]: { stateDiff: { [slot]: pad('0x2a') } } }]);
    expect(BigInt(diff.result)).toBe(42n);
    // `state` replaces all storage: the total supply slot reads zero.
    const supplyData = encodeFunctionData({ abi: token.abi, functionName: 'totalSupply' });
    const replaced = await rpc(t.node.url, 'eth_call', [{ to: TOKEN, data: supplyData }, 'latest', { [TOKEN]: { state: { [slot]: pad('0x2a') } } }]);
    expect(BigInt(replaced.result)).toBe(0n);
    const kept = await rpc(t.node.url, 'eth_call', [{ to: TOKEN, data: supplyData }, 'latest', { [TOKEN]: { stateDiff: { [slot]: pad('0x2a') } } }]);
    expect(BigInt(kept.result)).toBe(1_000_000n * 10n ** 18n);
    // Code override: run the token's code at another address.
    const elsewhere = '0x3333333333333333333333333333333333333333';
    const moved = await rpc(t.node.url, 'eth_call', [
      { to: elsewhere, data },
      'latest',
      { [elsewhere]: { code: token.runtime, stateDiff: { [slot]: pad('0x07') } } },
    ]);
    expect(BigInt(moved.result)).toBe(7n);
    // Balance override lets an empty account send value.
    const poor = '0x4444444444444444444444444444444444444444';
    const noFunds = await rpc(t.node.url, 'eth_call', [{ from: poor, to: HOLDER, value: '0x100' }, 'latest']);
    expect(noFunds.error.code).toBe(-32000);
    expect(noFunds.error.message).toMatch(/^insufficient funds for gas \* price \+ value/);
    const funded = await rpc(t.node.url, 'eth_call', [{ from: poor, to: HOLDER, value: '0x100' }, 'latest', { [poor]: { balance: '0x1000' } }]);
    expect(funded.result).toBe('0x');
    const both = await rpc(t.node.url, 'eth_call', [{ to: TOKEN, data }, 'latest', { [TOKEN]: { state: {}, stateDiff: {} } }]);
    expect(both.error.code).toBe(-32602);
    expect(both.error.message).toMatch(/both 'state' and 'stateDiff'/);
  });

  it('eth_call applies block overrides (number, time, baseFeePerGas) as its fourth parameter', async () => {
    const data = encodeFunctionData({ abi: probe.abi, functionName: 'context' });
    const r = await rpc(t.node.url, 'eth_call', [{ to: PROBE, data }, 'latest', null, { number: '0x1234', time: '0x5678', baseFeePerGas: '0x9' }]);
    const [number, timestamp, basefee, chainid] = decodeFunctionResult({ abi: probe.abi, functionName: 'context', data: r.result }) as readonly bigint[];
    expect([number, timestamp, basefee, chainid]).toEqual([0x1234n, 0x5678n, 9n, 31337n]);
    const bad = await rpc(t.node.url, 'eth_call', [{ to: PROBE, data }, 'latest', null, { numbr: '0x1' }]);
    expect(bad.error.code).toBe(-32602);
  });

  it('viem passes state overrides through', async () => {
    const result = await t.publicClient.call({
      to: TOKEN,
      data: encodeFunctionData({ abi: token.abi, functionName: 'balanceOf', args: [HOLDER] }),
      stateOverride: [{ address: TOKEN, stateDiff: [{ slot: balanceSlot(HOLDER), value: pad('0x05') }] }],
    });
    expect(decodeFunctionResult({ abi: token.abi, functionName: 'balanceOf', data: result.data as Hex })).toBe(5n);
  });
});

describe('block tags', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({
      configure: (c) => {
        c.chain.blockTimeMs = 200;
        c.chain.preconfIntervalMs = 50;
      },
    });
    await waitFor(async () => (await t.publicClient.getBlockNumber()) >= 3n, 10_000, 'three sealed blocks');
  });
  afterAll(() => t?.stop());

  it('accepts every tag, numbers, hashes and EIP-1898 objects, and reads the block each one names', async () => {
    // A transfer to a fresh account: its balance is 0 up to block n-1 and 1234 from block n,
    // so every selector of either block must read that block's value, not the head's.
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const hash = await t.wallet(1).sendTransaction({ to, value: 1234n, chain: t.chain, account: devAccount(1) });
    const sealed = await waitFor(
      async () => {
        const r = await t.publicClient.getTransactionReceipt({ hash }).catch(() => null);
        return r && r.blockHash !== pad('0x0') ? r : null;
      },
      10_000,
      'the transfer to be sealed',
    );
    const after = await t.publicClient.getBlock({ blockNumber: sealed.blockNumber });
    const before = await t.publicClient.getBlock({ blockNumber: sealed.blockNumber - 1n });
    const genesis = await t.publicClient.getBlock({ blockNumber: 0n });
    expect(after.hash).toBe(sealed.blockHash);
    // `safe` and `finalized` name the newest durable block: the sealed one once its commit lands.
    await waitFor(async () => (await t.publicClient.getBlock({ blockTag: 'safe' })).number >= sealed.blockNumber, 10_000, 'the block to be durable');
    const selectors = (b: typeof after) => [
      toHex(b.number),
      { blockNumber: toHex(b.number) },
      b.hash,
      { blockHash: b.hash },
      { blockHash: b.hash, requireCanonical: true },
    ];
    const cases: [unknown, bigint][] = [
      ...selectors(before).map((s): [unknown, bigint] => [s, 0n]),
      ...selectors(after).map((s): [unknown, bigint] => [s, 1234n]),
      ...selectors(genesis).map((s): [unknown, bigint] => [s, 0n]),
      ['0x1', 0n],
      [{ blockNumber: '0x1' }, 0n],
      ['earliest', 0n],
      ['latest', 1234n],
      ['pending', 1234n],
      ['safe', 1234n],
      ['finalized', 1234n],
    ];
    for (const [block, want] of cases) {
      const r = await rpc(t.node.url, 'eth_getBalance', [to, block]);
      expect(r.result, JSON.stringify(block)).toBe(toHex(want));
    }
    // An account nothing touched reads its genesis funds by every form.
    for (const block of [
      'latest',
      'pending',
      'safe',
      'finalized',
      'earliest',
      '0x0',
      '0x1',
      genesis.hash,
      { blockHash: genesis.hash },
      { blockHash: genesis.hash, requireCanonical: true },
      { blockNumber: '0x1' },
    ]) {
      const r = await rpc(t.node.url, 'eth_getBalance', [devAccount(0).address, block]);
      expect(r.result, JSON.stringify(block)).toBe(toHex(TEN_THOUSAND_ETH));
    }
    const latest = await t.publicClient.getBlock({ blockTag: 'latest' });
    const safe = await t.publicClient.getBlock({ blockTag: 'safe' });
    const finalized = await t.publicClient.getBlock({ blockTag: 'finalized' });
    const earliest = await t.publicClient.getBlock({ blockTag: 'earliest' });
    const pending = await t.publicClient.getBlock({ blockTag: 'pending' });
    expect(earliest.number).toBe(0n);
    // Documented rule: safe = finalized = the newest durable sealed block (finality depth 0
    // by default): the head, or the block before it while the head's commit is in flight.
    expect(safe.number).toBeGreaterThanOrEqual(latest.number! - 1n);
    expect(finalized.number).toBeGreaterThanOrEqual(latest.number! - 1n);
    expect(pending.number).toBeGreaterThan(latest.number!);
    expect(pending.hash).toBeNull();
  });

  it('refuses unknown blocks and malformed selectors', async () => {
    const a = devAccount(0).address;
    const future = await rpc(t.node.url, 'eth_getBalance', [a, '0xffffffff']);
    expect(future.error).toEqual({ code: -32000, message: 'header not found' });
    const unknownHash = await rpc(t.node.url, 'eth_getBalance', [a, { blockHash: pad('0x1234') }]);
    expect(unknownHash.error).toEqual({ code: -32000, message: 'header not found' });
    const tag = await rpc(t.node.url, 'eth_getBalance', [a, 'newest']);
    expect(tag.error.code).toBe(-32602);
    expect(tag.error.message).toMatch(/invalid argument 1: unknown block tag "newest"/);
    const both = await rpc(t.node.url, 'eth_getBalance', [a, { blockHash: pad('0x1'), blockNumber: '0x1' }]);
    expect(both.error.code).toBe(-32602);
    const lead = await rpc(t.node.url, 'eth_getBalance', [a, '0x01']);
    expect(lead.error.message).toMatch(/leading zero/);
  });
});

describe('JSON-RPC protocol', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({
      configure: (c) => {
        c.server.maxBodyBytes = 64 * 1024;
        c.server.maxBatch = 10;
        c.chain.genesis = JSON.stringify(testGenesis());
      },
    });
  });
  afterAll(() => t?.stop());
  const post = (body: string, headers?: Record<string, string>) => rawPost(t.node.url, body, headers);

  it('echoes ids exactly and answers batches in order', async () => {
    for (const id of [1, 'abc', null, 0, 9007199254740991]) {
      const r = await post(JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_chainId' }));
      expect(r.json).toEqual({ jsonrpc: '2.0', id, result: '0x7a69' });
    }
    const batch = await post(
      JSON.stringify([
        { jsonrpc: '2.0', id: 'a', method: 'eth_chainId' },
        { jsonrpc: '2.0', method: 'eth_chainId' },
        { jsonrpc: '2.0', id: 'b', method: 'nope_nothing' },
        { jsonrpc: '2.0', id: 'c', method: 'eth_call', params: [{ to: PROBE }, 'latest'] },
      ]),
    );
    expect(batch.json.map((r: { id: unknown }) => r.id)).toEqual(['a', 'b', 'c']);
    expect(batch.json[1].error.code).toBe(-32601);
    const onlyNotifications = await post(JSON.stringify([{ jsonrpc: '2.0', method: 'eth_chainId' }]));
    expect(onlyNotifications.status).toBe(200);
    expect(onlyNotifications.text).toBe('');
  });

  it('-32700 for malformed JSON', async () => {
    const r = await post('{"jsonrpc":"2.0",');
    expect(r.json.error.code).toBe(-32700);
    expect(r.json.id).toBeNull();
  });

  it('-32600 for invalid requests and an empty or oversized batch', async () => {
    const cases = [
      { id: 1, method: 'eth_chainId' },
      { jsonrpc: '1.0', id: 1, method: 'eth_chainId' },
      { jsonrpc: '2.0', id: 1 },
      { jsonrpc: '2.0', id: 1, method: 5 },
      { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: { a: 1 } },
      { jsonrpc: '2.0', id: { x: 1 }, method: 'eth_chainId' },
    ];
    for (const c of cases) {
      const r = await post(JSON.stringify(c));
      expect(r.json.error.code, JSON.stringify(c)).toBe(-32600);
    }
    expect((await post('[]')).json.error.code).toBe(-32600);
    expect((await post('5')).json.error.code).toBe(-32600);
    const big = await post(JSON.stringify(Array.from({ length: 11 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_chainId' }))));
    expect(big.json.error.code).toBe(-32600);
    expect(big.json.error.message).toMatch(/batch too large: 11 requests, limit is 10/);
  });

  it('-32601 names the missing method', async () => {
    const r = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_doesNotExist' }));
    expect(r.json.error).toEqual({ code: -32601, message: 'the method eth_doesNotExist does not exist/is not available' });
  });

  it('-32602 says which parameter is wrong and why', async () => {
    const check = async (method: string, params: unknown[], pattern: RegExp) => {
      const r = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }));
      expect(r.json.error?.code, `${method} ${JSON.stringify(params)}`).toBe(-32602);
      expect(r.json.error.message).toMatch(pattern);
    };
    await check('eth_getBalance', ['0x1234', 'latest'], /invalid argument 0: hex string of 20 bytes expected for address/);
    await check('eth_getBalance', [123, 'latest'], /invalid argument 0/);
    await check('eth_getBalance', [], /invalid argument 0/);
    await check('eth_getBalance', [HOLDER, 'latest', 'extra'], /too many arguments, want at most 2/);
    await check('eth_getStorageAt', [HOLDER, '0xzz', 'latest'], /invalid hex in storage key/);
    await check('eth_getStorageAt', [HOLDER, `0x${'0'.repeat(65)}`, 'latest'], /storage key too long/);
    await check('eth_call', [{ to: '0x12' }, 'latest'], /invalid argument 0\.to/);
    await check('eth_call', [{ to: HOLDER, value: 12 }, 'latest'], /invalid argument 0\.value/);
    await check('eth_call', [{ to: HOLDER, data: '0x123' }, 'latest'], /odd number of hex digits/);
    await check('eth_call', ['not an object', 'latest'], /transaction call object expected/);
    await check('eth_getBlockByNumber', ['latest', 'yes'], /invalid argument 1/);
    await check('eth_sendRawTransaction', ['0xzz'], /invalid argument 0/);
  });

  it('HTTP 413 above the body limit, 415 for another content type, 404 elsewhere', async () => {
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: ['x'.repeat(70 * 1024)] });
    const r = await post(huge);
    expect(r.status).toBe(413);
    expect(r.json.error.message).toMatch(/exceeds the limit of 65536 bytes/);
    const plain = await post('{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}', { 'content-type': 'text/plain' });
    expect(plain.status).toBe(415);
    const other = await fetch(`${t.node.url}/other`, { method: 'POST', body: '{}' });
    expect(other.status).toBe(404);
    // The server is still fine afterwards.
    expect((await post('{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}')).json.result).toBe('0x7a69');
  });

  it('keeps answering cheap requests while a heavy eth_call runs', async () => {
    const probe = contract('Probe');
    let heavyDone = 0;
    const heavy = Array.from({ length: 4 }, () =>
      rpc(t.node.url, 'eth_call', [{ to: PROBE, gas: '0x2faf080', data: encodeFunctionData({ abi: probe.abi, functionName: 'burn' }) }, 'latest']).then((r) => {
        heavyDone++;
        return r;
      }),
    );
    const cheap = await rpc(t.node.url, 'eth_chainId');
    expect(cheap.result).toBe('0x7a69');
    // Answered while every heavy call still ran: it did not wait behind them (a node that
    // ran eth_call on the event loop would answer it after them).
    expect(heavyDone).toBe(0);
    const results = await Promise.all(heavy);
    for (const r of results) expect(r.error.message).toBe('out of gas');
  });
});
