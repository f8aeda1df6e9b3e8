// Transactions, pre-confirmations, sealing and receipts, with viem's wallet client.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createWalletClient,
  encodeFunctionData,
  http,
  keccak256,
  parseEther,
  parseSignature,
  toRlp,
  parseGwei,
  serializeTransaction,
  toHex,
  type Hex,
  type TransactionSerializable,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { contract } from '../helpers/contracts.js';
import { headerHash } from '../helpers/header.js';
import { devAccount, rawPost, rpc, startTestNode, withTestNode, type TestNode } from '../helpers/node.js';
import { quietPeriod, waitFor } from '../helpers/wait.js';
import { signTransfer } from '../helpers/transfer.js';

describe('wallet flow on the default cadence (200 ms pre-confirmations, 2 s blocks)', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode();
  });
  afterAll(() => t?.stop());

  it('a transfer is pre-confirmed, visible to pending reads before its block is sealed', async () => {
    const wallet = t.wallet(1);
    // Sent right after a block opened, so the 2 s until its seal leave room to look at the
    // transaction before it is sealed. (How soon a pre-confirmation goes out is the
    // builder's schedule, unit-tested in crates/chain/src/builder/schedule.rs.)
    const opened = await t.publicClient.getBlockNumber();
    await waitFor(async () => (await t.publicClient.getBlockNumber()) > opened, 5_000, 'a block to be sealed', 5);
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const hash = await wallet.sendTransaction({ to, value: 12345n, chain: t.chain, account: devAccount(1) });
    const preconf = await waitFor(
      async () => {
        const r = (await rpc(t.node.url, 'preconf_transactionStatus', [hash])).result as { status: string; blockNumber: Hex };
        return r.status === 'preconfirmed' ? r : null;
      },
      5_000,
      'the transfer to be pre-confirmed',
      5,
    );
    const number = BigInt(preconf.blockNumber);
    // Pre-confirmed, not sealed: it is in the block being built, after the sealed head.
    expect(number).toBe((await t.publicClient.getBlockNumber()) + 1n);
    expect(await t.publicClient.getBalance({ address: to, blockTag: 'pending' })).toBe(12345n);
    const pendingBlock = await t.publicClient.getBlock({ blockTag: 'pending' });
    // Latest does not have it, pending does; eth_getBlockReceipts("pending") has its
    // receipt, eth_getTransactionReceipt does not yet (as geth), and the transaction object
    // has no block fields.
    expect(pendingBlock.number).toBe(number);
    expect(await t.publicClient.getBalance({ address: to, blockTag: 'latest' })).toBe(0n);
    expect(pendingBlock.transactions).toContain(hash);
    const pendingReceipts = (await rpc(t.node.url, 'eth_getBlockReceipts', ['pending'])).result as { transactionHash: Hex; status: Hex; gasUsed: Hex }[];
    const mine = pendingReceipts.find((r) => r.transactionHash === hash);
    expect(mine?.status).toBe('0x1');
    expect(mine?.gasUsed).toBe('0x5208');
    const byHash = (await rpc(t.node.url, 'eth_getTransactionByHash', [hash])).result;
    expect(byHash.blockHash).toBeNull();
    expect(byHash.blockNumber).toBeNull();
    expect(byHash.transactionIndex).toBeNull();
    expect((await rpc(t.node.url, 'eth_getTransactionReceipt', [hash])).result).toBeNull();
    expect(await t.publicClient.getBlockNumber(), 'still not sealed while we looked').toBe(number - 1n);

    // Then it is sealed: the receipt appears with the sealed block, whose header re-hashes
    // to the block hash.
    const sealed = await waitFor(() => t.publicClient.getTransactionReceipt({ hash }).catch(() => null), 5_000, 'the transfer to be sealed (its receipt)');
    expect(sealed.status).toBe('success');
    expect(sealed.gasUsed).toBe(21000n);
    expect(sealed.blockNumber).toBe(number);
    expect(sealed.blockHash).not.toBe(`0x${'00'.repeat(32)}`);
    expect(await t.publicClient.getBalance({ address: to, blockTag: 'latest' })).toBe(12345n);
    const block = (await rpc(t.node.url, 'eth_getBlockByNumber', [toHex(sealed.blockNumber), false])).result;
    expect(block.hash).toBe(sealed.blockHash);
    expect(headerHash(block)).toBe(block.hash);
    expect(block.transactions).toContain(hash);
    const tx = await t.publicClient.getTransaction({ hash });
    expect(tx.blockHash).toBe(sealed.blockHash);
  });

  it('viem deployContract, writeContract and waitForTransactionReceipt work unchanged', async () => {
    const token = contract('Token');
    const wallet = t.wallet(2);
    const me = devAccount(2);
    const deployHash = await wallet.deployContract({ abi: token.abi, bytecode: token.bytecode, args: [1000n], chain: t.chain, account: me });
    const deployed = await t.publicClient.waitForTransactionReceipt({ hash: deployHash, pollingInterval: 20 });
    expect(deployed.status).toBe('success');
    const address = deployed.contractAddress!;
    expect(address).toMatch(/^0x[0-9a-f]{40}$/i);
    expect(await t.publicClient.getCode({ address, blockTag: 'pending' })).toBe(token.runtime);
    const friend = devAccount(3).address;
    const writeHash = await wallet.writeContract({ address, abi: token.abi, functionName: 'transfer', args: [friend, 250n], chain: t.chain, account: me });
    const written = await t.publicClient.waitForTransactionReceipt({ hash: writeHash, pollingInterval: 20 });
    expect(written.status).toBe('success');
    expect(written.logs).toHaveLength(1);
    expect(written.logs[0]!.address.toLowerCase()).toBe(address.toLowerCase());
    const balance = await t.publicClient.readContract({ address, abi: token.abi, functionName: 'balanceOf', args: [friend], blockTag: 'pending' });
    expect(balance).toBe(250n);
  });

  it('eth_sendTransaction signs for the dev accounts (viem JSON-RPC account), and for nobody else', async () => {
    const accounts = (await rpc(t.node.url, 'eth_accounts')).result as string[];
    expect(accounts).toHaveLength(10);
    expect(accounts[0]).toBe(devAccount(0).address.toLowerCase());
    const jsonRpcWallet = createWalletClient({ chain: t.chain, transport: http(t.node.url), account: devAccount(5).address });
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const hash = await jsonRpcWallet.sendTransaction({ to, value: 77n });
    const receipt = await waitFor(
      () => t.publicClient.getTransactionReceipt({ hash }).catch(() => null),
      5_000,
      'the eth_sendTransaction transfer to be pre-confirmed',
    );
    expect(receipt.status).toBe('success');
    expect(receipt.from.toLowerCase()).toBe(devAccount(5).address.toLowerCase());
    expect(await t.publicClient.getBalance({ address: to, blockTag: 'pending' })).toBe(77n);
    const stranger = await rpc(t.node.url, 'eth_sendTransaction', [{ from: to, to, value: '0x1' }]);
    expect(stranger.error).toEqual({ code: -32000, message: 'unknown account' });
  });

  it('a pending eth_call sees the block being built: its number, timestamp and base fee', async () => {
    const probe = contract('Probe');
    const wallet = t.wallet(4);
    const hash = await wallet.deployContract({ abi: probe.abi, bytecode: probe.bytecode, chain: t.chain, account: devAccount(4) });
    const { contractAddress } = await t.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    for (let i = 0; i < 3; i++) {
      const before = await t.publicClient.getBlock({ blockTag: 'pending' });
      const [number, timestamp, basefee] = (await t.publicClient.readContract({
        address: contractAddress!,
        abi: probe.abi,
        functionName: 'context',
        blockTag: 'pending',
      })) as readonly [bigint, bigint, bigint, bigint];
      const after = await t.publicClient.getBlock({ blockTag: 'pending' });
      // The block being built may roll over between the reads; the call matches one of them.
      const match = [before, after].find((b) => b.number === number);
      expect(match, `call saw block ${number}, pending was ${before.number}..${after.number}`).toBeDefined();
      expect(timestamp).toBe(match!.timestamp);
      expect(basefee).toBe(match!.baseFeePerGas);
      // And it is the block after the sealed head, never one several blocks behind.
      expect(number).toBeGreaterThan(await t.publicClient.getBlockNumber().then((n) => n - 1n));
      // The next sample in the next block being built.
      if (i < 2)
        await waitFor(async () => (await t.publicClient.getBlock({ blockTag: 'pending' })).number! > after.number!, 5_000, 'the next block to be built');
    }
  });
});

describe('refusals, replacement and queued transactions', () => {
  let t: TestNode;
  // A long block time and interval: nothing is included unless a test waits for it.
  beforeAll(async () => {
    t = await startTestNode({
      configure: (c) => {
        c.chain.preconfIntervalMs = 100;
        c.chain.blockTimeMs = 1000;
      },
    });
  });
  afterAll(() => t?.stop());

  const send = (raw: Hex) => rpc(t.node.url, 'eth_sendRawTransaction', [raw]);
  const base = async (): Promise<bigint> => (await t.publicClient.getBlock({ blockTag: 'pending' })).baseFeePerGas!;
  async function signed(i: number, tx: Partial<TransactionSerializable> & { nonce: number }): Promise<Hex> {
    return devAccount(i).signTransaction({
      chainId: 31337,
      type: 'eip1559',
      to: '0x000000000000000000000000000000000000bEEF',
      gas: 21000n,
      maxFeePerGas: parseGwei('100'),
      maxPriorityFeePerGas: parseGwei('1'),
      value: 1n,
      ...tx,
    } as TransactionSerializable);
  }
  const nonceOf = (i: number) => t.publicClient.getTransactionCount({ address: devAccount(i).address, blockTag: 'pending' });

  it('nonce too low', async () => {
    const n = await nonceOf(5);
    const first = await send(await signed(5, { nonce: n }));
    expect(first.result).toMatch(/^0x[0-9a-f]{64}$/);
    await waitFor(async () => (await rpc(t.node.url, 'eth_getTransactionReceipt', [first.result])).result, 10_000, 'the first transaction to be pre-confirmed');
    const again = await send(await signed(5, { nonce: n, value: 2n }));
    expect(again.error.code).toBe(-32000);
    expect(again.error.message).toMatch(/^nonce too low/);
  });

  it('insufficient funds for gas * price + value', async () => {
    const poor = privateKeyToAccount(generatePrivateKey());
    const raw = await signTransfer(poor, { to: poor.address, nonce: 0, maxFeePerGas: parseGwei('10') });
    const r = await send(raw);
    expect(r.error.code).toBe(-32000);
    expect(r.error.message).toMatch(/^insufficient funds for gas \* price \+ value/);
  });

  it('already known, replacement underpriced at +9% and accepted at +10%, queued until the gap fills', async () => {
    const n = await nonceOf(6);
    // Nonce n+1 leaves a gap: it waits in the pool.
    const gapRaw = await signed(6, { nonce: n + 1, maxFeePerGas: parseGwei('100'), maxPriorityFeePerGas: parseGwei('10') });
    const gap = await send(gapRaw);
    expect(gap.result).toBe(keccak256(gapRaw));
    expect((await send(gapRaw)).error).toEqual({ code: -32000, message: 'already known' });
    const plus9 = await send(await signed(6, { nonce: n + 1, maxFeePerGas: parseGwei('109'), maxPriorityFeePerGas: parseGwei('10.9') }));
    expect(plus9.error).toEqual({ code: -32000, message: 'replacement transaction underpriced' });
    const onlyFee = await send(await signed(6, { nonce: n + 1, maxFeePerGas: parseGwei('200'), maxPriorityFeePerGas: parseGwei('10') }));
    expect(onlyFee.error).toEqual({ code: -32000, message: 'replacement transaction underpriced' });
    const plus10Raw = await signed(6, { nonce: n + 1, maxFeePerGas: parseGwei('110'), maxPriorityFeePerGas: parseGwei('11') });
    const plus10 = await send(plus10Raw);
    expect(plus10.result).toBe(keccak256(plus10Raw));
    // The replaced one is reported dropped, never pending.
    expect((await rpc(t.node.url, 'preconf_transactionStatus', [gap.result])).result.status).toBe('dropped');
    expect((await rpc(t.node.url, 'eth_getTransactionByHash', [gap.result])).result).toBeNull();
    // Still queued: three intervals later it is neither pre-confirmed nor sealed. (A quiet
    // period on purpose: the point is that nothing happens.)
    await quietPeriod(300);
    expect((await rpc(t.node.url, 'preconf_transactionStatus', [plus10.result])).result.status).toBe('queued');
    const pooled = (await rpc(t.node.url, 'eth_getTransactionByHash', [plus10.result])).result;
    expect(pooled.blockNumber).toBeNull();
    expect(pooled.hash).toBe(plus10.result);
    // Filling the gap promotes it: both are pre-confirmed.
    const fill = await send(await signed(6, { nonce: n }));
    expect(fill.result).toBeDefined();
    expect(await nonceOf(6)).toBe(n + 2);
    const r1 = await waitFor(
      async () => (await rpc(t.node.url, 'eth_getTransactionReceipt', [plus10.result])).result,
      10_000,
      'the promoted replacement to be pre-confirmed',
    );
    expect(r1.status).toBe('0x1');
  });

  it('every other refusal, with its own message', async () => {
    const n = await nonceOf(7);
    const cases: [Partial<TransactionSerializable>, RegExp][] = [
      [{ gas: 20_000n }, /^intrinsic gas too low/],
      [{ gas: 40_000_000n }, /^exceeds block gas limit/],
      [{ chainId: 1 }, /^invalid chain id/],
      [{ maxFeePerGas: 1n, maxPriorityFeePerGas: 1n }, /^max fee per gas less than block base fee/],
      [{ data: `0x${'01'.repeat(130 * 1024)}`, gas: 29_000_000n }, /^oversized data/],
    ];
    expect(await base()).toBeGreaterThan(1n);
    for (const [tx, message] of cases) {
      const r = await send(await signed(7, { nonce: n, ...tx }));
      expect(r.error?.code, JSON.stringify(tx, (_, v) => (typeof v === 'bigint' ? v.toString() : v)).slice(0, 80)).toBe(-32000);
      expect(r.error.message).toMatch(message);
    }
    // Tip above the fee cap (viem will not sign it, so the envelope is built by hand).
    const rlpInt = (v: number | bigint): Hex => {
      const h = BigInt(v).toString(16);
      return BigInt(v) === 0n ? '0x' : (`0x${h.length % 2 ? '0' : ''}${h}` as Hex);
    };
    const fields = [rlpInt(31337), rlpInt(n), rlpInt(parseGwei('2')), rlpInt(parseGwei('1')), rlpInt(21000), devAccount(0).address, '0x', '0x', []] as const;
    const unsigned = `0x02${toRlp(fields as unknown as Hex[]).slice(2)}` as Hex;
    const sig = await devAccount(7).sign({ hash: keccak256(unsigned) });
    const { r: sr, s: ss, yParity } = parseSignature(sig);
    const tipAbove = `0x02${toRlp([...fields, yParity ? '0x01' : '0x', sr, ss] as unknown as Hex[]).slice(2)}` as Hex;
    const tipRes = await send(tipAbove);
    expect(tipRes.error.code).toBe(-32000);
    expect(tipRes.error.message).toMatch(/^max priority fee per gas higher than max fee per gas/);
    // Blob transactions: this chain has none.
    const blob = await send(`0x03${(await signed(7, { nonce: n })).slice(4)}` as Hex);
    expect(blob.error.code).toBe(-32000);
    expect(blob.error.message).toMatch(/^transaction type not supported/);
    // A signature that recovers to nobody.
    const tx: TransactionSerializable = {
      chainId: 31337,
      type: 'eip1559',
      to: devAccount(0).address,
      gas: 21000n,
      maxFeePerGas: parseGwei('10'),
      maxPriorityFeePerGas: 1n,
      nonce: 0,
    };
    const bad = serializeTransaction(tx, { r: `0x${'ff'.repeat(32)}`, s: `0x${'ff'.repeat(32)}`, yParity: 0 });
    const invalid = await send(bad);
    expect(invalid.error).toEqual({ code: -32000, message: 'invalid sender' });
    // Bytes that do not decode at all.
    const garbage = await send('0x02deadbeef');
    expect(garbage.error.code).toBe(-32602);
    // Nothing above was accepted.
    expect(await nonceOf(7)).toBe(n);
  });

  it('legacy (with and without EIP-155), EIP-2930 and EIP-7702 transactions are accepted', async () => {
    const acct = devAccount(8);
    let n = await nonceOf(8);
    const legacy155 = await acct.signTransaction({ chainId: 31337, type: 'legacy', to: acct.address, gas: 21000n, gasPrice: parseGwei('5'), nonce: n++ });
    const legacyPlain = await acct.signTransaction({ type: 'legacy', to: acct.address, gas: 21000n, gasPrice: parseGwei('5'), nonce: n++ });
    const accessList = await acct.signTransaction({
      chainId: 31337,
      type: 'eip2930',
      to: acct.address,
      gas: 30000n,
      gasPrice: parseGwei('5'),
      nonce: n++,
      accessList: [{ address: acct.address, storageKeys: [] }],
    });
    const authorization = await acct.signAuthorization({ chainId: 31337, contractAddress: '0x000000000000000000000000000000000000c0de', nonce: n + 1 });
    const setCode = await acct.signTransaction({
      chainId: 31337,
      type: 'eip7702',
      to: acct.address,
      gas: 100000n,
      maxFeePerGas: parseGwei('5'),
      maxPriorityFeePerGas: 1n,
      nonce: n++,
      authorizationList: [authorization],
    });
    const hashes: Hex[] = [];
    for (const raw of [legacy155, legacyPlain, accessList, setCode]) {
      const r = await send(raw);
      expect(r.error, raw.slice(0, 6)).toBeUndefined();
      hashes.push(r.result);
    }
    const types = [];
    for (const h of hashes) {
      const receipt = await waitFor(async () => (await rpc(t.node.url, 'eth_getTransactionReceipt', [h])).result, 10_000, `receipt of ${h}`);
      expect(receipt.status).toBe('0x1');
      types.push(receipt.type);
    }
    expect(types).toEqual(['0x0', '0x0', '0x1', '0x4']);
    const plain = (await rpc(t.node.url, 'eth_getTransactionByHash', [hashes[1]])).result;
    expect(plain.chainId).toBeUndefined();
    expect(plain.v).toMatch(/^0x1[bc]$/);
    // The 7702 delegation is in place.
    expect(await t.publicClient.getCode({ address: acct.address, blockTag: 'pending' })).toBe('0xef0100000000000000000000000000000000000000c0de');
  });
});

describe('receipts, blocks and fee data', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({
      configure: (c) => {
        c.chain.preconfIntervalMs = 50;
        c.chain.blockTimeMs = 500;
      },
    });
  });
  afterAll(() => t?.stop());

  it('eth_getBlockReceipts by number, hash and tag, in geth shape; [] for an empty block', async () => {
    const token = contract('Token');
    const hash = await t.wallet(0).deployContract({ abi: token.abi, bytecode: token.bytecode, args: [5n], chain: t.chain, account: devAccount(0) });
    const pending = (await waitFor(
      async () => {
        const r = (await rpc(t.node.url, 'eth_getBlockReceipts', ['pending'])).result as { transactionHash: Hex }[];
        return r.some((x) => x.transactionHash === hash) ? r : null;
      },
      10_000,
      'the deployment among the pending block receipts',
    )) as Record<string, unknown>[];
    const mine = pending.find((r) => r.transactionHash === hash)!;
    expect(Object.keys(mine).sort()).toEqual(
      [
        'blockHash',
        'blockNumber',
        'contractAddress',
        'cumulativeGasUsed',
        'effectiveGasPrice',
        'from',
        'gasUsed',
        'logs',
        'logsBloom',
        'status',
        'to',
        'transactionHash',
        'transactionIndex',
        'type',
      ].sort(),
    );
    const log = (mine.logs as Record<string, unknown>[])[0]!;
    expect(Object.keys(log).sort()).toEqual(
      ['address', 'blockHash', 'blockNumber', 'blockTimestamp', 'data', 'logIndex', 'removed', 'topics', 'transactionHash', 'transactionIndex'].sort(),
    );
    const receipt = await t.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    const sealed = await waitFor(
      async () => {
        const r = await t.publicClient.getTransactionReceipt({ hash });
        return r.blockHash !== `0x${'00'.repeat(32)}` ? r : null;
      },
      10_000,
      'the deployment to be sealed',
    );
    const byNumber = (await rpc(t.node.url, 'eth_getBlockReceipts', [toHex(sealed.blockNumber)])).result;
    const byHash = (await rpc(t.node.url, 'eth_getBlockReceipts', [{ blockHash: sealed.blockHash }])).result;
    expect(byHash).toEqual(byNumber);
    expect(byNumber.map((r: { transactionHash: Hex }) => r.transactionHash)).toContain(receipt.transactionHash);
    const viemReceipts = await t.publicClient.getBlockReceipts({ blockNumber: sealed.blockNumber });
    expect(viemReceipts.find((r) => r.transactionHash === hash)?.contractAddress).toBe(receipt.contractAddress);
    // An empty block answers [].
    expect((await rpc(t.node.url, 'eth_getBlockReceipts', ['0x0'])).result).toEqual([]);
    expect((await rpc(t.node.url, 'eth_getBlockReceipts', ['0xffffff'])).result).toBeNull();
  });

  it('eth_getTransactionCount with pending counts pooled transactions', async () => {
    const acct = devAccount(9);
    const n = await t.publicClient.getTransactionCount({ address: acct.address, blockTag: 'latest' });
    const tx = { chainId: 31337, type: 'eip1559' as const, to: acct.address, gas: 21000n, maxFeePerGas: parseGwei('50'), maxPriorityFeePerGas: 1n };
    await rpc(t.node.url, 'eth_sendRawTransaction', [await acct.signTransaction({ ...tx, nonce: n })]);
    await rpc(t.node.url, 'eth_sendRawTransaction', [await acct.signTransaction({ ...tx, nonce: n + 1 })]);
    expect(await t.publicClient.getTransactionCount({ address: acct.address, blockTag: 'pending' })).toBe(n + 2);
  });

  it('eth_estimateGas finds what a call needs, and reports reverts like eth_call', async () => {
    const token = contract('Token');
    const hash = await t.wallet(1).deployContract({ abi: token.abi, bytecode: token.bytecode, args: [100n], chain: t.chain, account: devAccount(1) });
    const { contractAddress } = await t.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    // Omitted block means pending (documented): the contract is usable before its block seals.
    const gas = await t.publicClient.estimateGas({
      account: devAccount(1).address,
      to: contractAddress!,
      data: encodeFunctionData({ abi: token.abi, functionName: 'transfer', args: [devAccount(2).address, 1n] }),
    });
    expect(gas).toBeGreaterThan(30_000n);
    expect(gas).toBeLessThan(80_000n);
    expect(await t.publicClient.estimateGas({ account: devAccount(1).address, to: devAccount(2).address, value: 1n })).toBe(21000n);
    const tooMuch = await rpc(t.node.url, 'eth_estimateGas', [
      {
        from: devAccount(2).address,
        to: contractAddress,
        data: encodeFunctionData({ abi: token.abi, functionName: 'transfer', args: [devAccount(1).address, 1000n] }),
      },
    ]);
    expect(tooMuch.error.code).toBe(-32000);
    expect(tooMuch.error.message).toBe('execution reverted: insufficient balance');
    expect(tooMuch.error.data).toMatch(/^0x08c379a0/);
    // Sending with exactly the estimate succeeds.
    const w = await t.wallet(1).writeContract({
      address: contractAddress!,
      abi: token.abi,
      functionName: 'transfer',
      args: [devAccount(2).address, 1n],
      gas,
      chain: t.chain,
      account: devAccount(1),
    });
    expect((await t.publicClient.waitForTransactionReceipt({ hash: w, pollingInterval: 20 })).status).toBe('success');
  });

  it('eth_gasPrice, eth_maxPriorityFeePerGas and eth_feeHistory', async () => {
    const pending = await t.publicClient.getBlock({ blockTag: 'pending' });
    const tip = await t.publicClient.estimateMaxPriorityFeePerGas();
    expect(tip).toBeGreaterThan(0n);
    const price = await t.publicClient.getGasPrice();
    expect(price).toBeGreaterThanOrEqual(pending.baseFeePerGas! - pending.baseFeePerGas! / 8n);
    const fees = await t.publicClient.estimateFeesPerGas();
    expect(fees.maxFeePerGas).toBeGreaterThan(fees.maxPriorityFeePerGas);
    const history = await t.publicClient.getFeeHistory({ blockCount: 4, blockTag: 'latest', rewardPercentiles: [25, 75] });
    expect(history.baseFeePerGas).toHaveLength(history.gasUsedRatio.length + 1);
    expect(history.reward).toHaveLength(history.gasUsedRatio.length);
    expect(history.reward![0]).toHaveLength(2);
    const bad = await rpc(t.node.url, 'eth_feeHistory', ['0x2', 'latest', [50, 10]]);
    expect(bad.error.code).toBe(-32602);
  });
});

export { parseEther };
