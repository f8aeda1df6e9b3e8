// Every quantity parameter of every method, for the robustness sweep: where the value goes,
// how the error names it, how wide it may be, and what a value in range answers.

import { expect } from 'vitest';

/** The values the sweep sends: the edges where a JavaScript number, a u64, a u128 and a
 *  U256 each stop being exact. */
export const QUANTITY_VALUES = {
  '2^53+1': '0x20000000000001',
  '2^64-1': '0xffffffffffffffff',
  '2^64': '0x10000000000000000',
  '2^128': `0x1${'0'.repeat(32)}`,
  '2^256-1': `0x${'f'.repeat(64)}`,
  '2^256': `0x1${'0'.repeat(64)}`,
} as const;

export interface Reply {
  id?: unknown;
  result?: any;
  error?: { code: number; message: string; data?: unknown };
}

export interface Context {
  genesisHash: string;
}

export interface QuantityParam {
  method: string;
  params(q: string, ctx: Context): unknown[];
  /** How error messages name the parameter: they start with this and ": ". */
  path: string;
  /** In range below 2^bits (63: a block number, an int64 in geth). */
  bits: number;
  /** A 32-byte value is a block hash here (geth's BlockNumberOrHash): looked up, not refused. */
  hashAt256?: boolean;
  /** What a value in range answers. */
  inRange(reply: Reply, q: string): void;
}

export const fits = (p: QuantityParam, q: string): boolean => (p.hashAt256 === true && q.length === 66) || BigInt(q) < 2n ** BigInt(p.bits);

/** How `q` would read after a trip through a JavaScript number, where that differs from q. */
export function roundedForms(q: string): string[] {
  const exact = BigInt(q);
  const n = Number(exact);
  const forms = [String(n), BigInt(n).toString(), `0x${BigInt(n).toString(16)}`];
  return [...new Set(forms)].filter((f) => f !== exact.toString() && f !== `0x${exact.toString(16)}`);
}

const A = '0x1111111111111111111111111111111111111111';
const NONCE_MAX = QUANTITY_VALUES['2^64-1'];

const result = (want?: unknown) => (r: Reply) => {
  expect(r.error).toBeUndefined();
  if (want !== undefined) expect(r.result).toEqual(want);
};
const error = (code: number, message: RegExp) => (r: Reply) => {
  expect(r.error?.code, r.error?.message).toBe(code);
  expect(r.error!.message).toMatch(message);
};
const headerNotFound = error(-32000, /^header not found$/);
const noFunds = error(-32000, /^insufficient funds for gas \* price \+ value/);
/** A call from an account at nonce 2^64-1 cannot run (EIP-2681); below that it does. */
const nonceRule = (r: Reply, q: string) => (q === NONCE_MAX ? error(-32000, /^nonce has max value/)(r) : result('0x')(r));

/** Anything but a refusal of the value: the sweep itself checks that it is no range error
 *  naming the parameter, no internal error, and no rounded echo. */
const answered = (): void => {};

/** A plain transfer's estimate: 21,000 gas, within geth's 1.5% estimation tolerance. */
const transferGas = (r: Reply): void => {
  expect(r.error).toBeUndefined();
  expect(BigInt(r.result)).toBeGreaterThanOrEqual(21_000n);
  expect(BigInt(r.result)).toBeLessThanOrEqual(21_315n);
};

/** Quantity fields of a transaction call object, and their widths in the addon (alloy). */
const CALL_FIELDS: Record<string, number> = {
  gas: 64,
  gasPrice: 128,
  maxFeePerGas: 128,
  maxPriorityFeePerGas: 128,
  maxFeePerBlobGas: 128,
  value: 256,
  nonce: 64,
  chainId: 64,
  type: 8,
};

const AUTH_FIELDS: Record<string, number> = { chainId: 256, nonce: 64, yParity: 8, r: 256, s: 256 };
const WITHDRAWAL_FIELDS = ['index', 'validatorIndex', 'amount'];
const withdrawal = (f: string, q: string) => ({ index: '0x0', validatorIndex: '0x0', address: A, amount: '0x1', [f]: q });

const call = (extra: object) => ({ from: A, to: A, ...extra });
const auth = (extra: object) => ({ chainId: '0x7a69', address: A, nonce: '0x0', yParity: '0x0', r: '0x1', s: '0x1', ...extra });
const sim = (block: object) => [{ blockStateCalls: [block] }, 'latest'];
const simResult = (check?: (block: any, q: string) => void) => (r: Reply, q: string) => {
  expect(r.error, r.error?.message).toBeUndefined();
  check?.(r.result[0], q);
};

export const QUANTITY_PARAMS: QuantityParam[] = [
  // Block numbers where a hash is also accepted.
  { method: 'eth_getBalance', params: (q) => [A, q], path: 'invalid argument 1', bits: 63, hashAt256: true, inRange: headerNotFound },
  { method: 'eth_getBalance', params: (q) => [A, { blockNumber: q }], path: 'invalid argument 1.blockNumber', bits: 63, inRange: headerNotFound },
  { method: 'eth_getTransactionCount', params: (q) => [A, q], path: 'invalid argument 1', bits: 63, hashAt256: true, inRange: headerNotFound },
  { method: 'eth_getCode', params: (q) => [A, q], path: 'invalid argument 1', bits: 63, hashAt256: true, inRange: headerNotFound },
  { method: 'eth_getStorageAt', params: (q) => [A, '0x0', q], path: 'invalid argument 2', bits: 63, hashAt256: true, inRange: headerNotFound },
  { method: 'eth_call', params: (q) => [call({}), q], path: 'invalid argument 1', bits: 63, hashAt256: true, inRange: headerNotFound },
  { method: 'eth_estimateGas', params: (q) => [call({}), q], path: 'invalid argument 1', bits: 63, hashAt256: true, inRange: headerNotFound },
  { method: 'eth_simulateV1', params: (q) => [{ blockStateCalls: [{}] }, q], path: 'invalid argument 1', bits: 63, hashAt256: true, inRange: headerNotFound },
  { method: 'eth_getBlockReceipts', params: (q) => [q], path: 'invalid argument 0', bits: 63, hashAt256: true, inRange: result(null) },
  // Block numbers only (geth's rpc.BlockNumber).
  { method: 'eth_getBlockByNumber', params: (q) => [q, false], path: 'invalid argument 0', bits: 63, inRange: result(null) },
  { method: 'eth_getBlockTransactionCountByNumber', params: (q) => [q], path: 'invalid argument 0', bits: 63, inRange: result(null) },
  { method: 'eth_getTransactionByBlockNumberAndIndex', params: (q) => [q, '0x0'], path: 'invalid argument 0', bits: 63, inRange: result(null) },
  { method: 'eth_getUncleCountByBlockNumber', params: (q) => [q], path: 'invalid argument 0', bits: 63, inRange: result(null) },
  { method: 'eth_feeHistory', params: (q) => ['0x1', q, []], path: 'invalid argument 1', bits: 63, inRange: headerNotFound },
  // geth's answers for a range past the head, and for a start past the (default) end.
  {
    method: 'eth_getLogs',
    params: (q) => [{ toBlock: q }],
    path: 'invalid argument 0.toBlock',
    bits: 63,
    inRange: error(-32602, /^block range extends beyond current head block$/),
  },
  {
    method: 'eth_getLogs',
    params: (q) => [{ fromBlock: q }],
    path: 'invalid argument 0.fromBlock',
    bits: 63,
    inRange: error(-32602, /^invalid block range params$/),
  },
  // Indexes, counts, timeouts, storage slots.
  { method: 'eth_getTransactionByBlockNumberAndIndex', params: (q) => ['latest', q], path: 'invalid argument 1', bits: 64, inRange: result(null) },
  { method: 'eth_getTransactionByBlockHashAndIndex', params: (q, c) => [c.genesisHash, q], path: 'invalid argument 1', bits: 64, inRange: result(null) },
  {
    method: 'eth_feeHistory',
    params: (q) => [q, 'latest', []],
    path: 'invalid argument 0',
    bits: 64,
    // Clamped to 1,024 blocks, and the chain is younger: every block from genesis.
    inRange: (r) => {
      expect(r.error).toBeUndefined();
      expect(r.result.oldestBlock).toBe('0x0');
      expect(r.result.baseFeePerGas).toHaveLength(r.result.gasUsedRatio.length + 1);
    },
  },
  // A timeout is 1..60,000 ms: every value of the sweep is past it (within 16 bits).
  { method: 'eth_sendRawTransactionSync', params: (q) => ['0x00', q], path: 'invalid argument 1', bits: 16, inRange: result() },
  { method: 'eth_getStorageAt', params: (q) => [A, q, 'latest'], path: 'invalid argument 1', bits: 256, inRange: result(`0x${'0'.repeat(64)}`) },
  // Transaction call objects (eth_call).
  { method: 'eth_call', params: (q) => [call({ gas: q }), 'latest'], path: 'invalid argument 0.gas', bits: 64, inRange: result('0x') },
  ...(['gasPrice', 'maxFeePerGas', 'maxPriorityFeePerGas'] as const).map(
    (f): QuantityParam => ({ method: 'eth_call', params: (q) => [call({ [f]: q }), 'latest'], path: `invalid argument 0.${f}`, bits: 128, inRange: noFunds }),
  ),
  {
    method: 'eth_call',
    params: (q) => [call({ maxFeePerBlobGas: q }), 'latest'],
    path: 'invalid argument 0.maxFeePerBlobGas',
    bits: 128,
    inRange: result('0x'),
  },
  { method: 'eth_call', params: (q) => [call({ value: q }), 'latest'], path: 'invalid argument 0.value', bits: 256, inRange: noFunds },
  { method: 'eth_call', params: (q) => [call({ nonce: q }), 'latest'], path: 'invalid argument 0.nonce', bits: 64, inRange: nonceRule },
  {
    method: 'eth_call',
    params: (q) => [call({ chainId: q }), 'latest'],
    path: 'invalid argument 0.chainId',
    bits: 64,
    inRange: error(-32000, /^invalid chain id$/),
  },
  { method: 'eth_call', params: (q) => [call({ type: q }), 'latest'], path: 'invalid argument 0.type', bits: 8, inRange: result() },
  // EIP-7702 authorizations, in eth_call and in eth_simulateV1 (a bad signature only
  // skips the authorization, so the call itself runs).
  ...Object.entries(AUTH_FIELDS).flatMap(([f, bits]): QuantityParam[] => [
    {
      method: 'eth_call',
      params: (q) => [call({ authorizationList: [auth({ [f]: q })] }), 'latest'],
      path: `invalid argument 0.authorizationList[0].${f}`,
      bits,
      inRange: result('0x'),
    },
    {
      method: 'eth_simulateV1',
      params: (q) => sim({ calls: [call({ authorizationList: [auth({ [f]: q })] })] }),
      path: `invalid argument 0.blockStateCalls[0].calls[0].authorizationList[0].${f}`,
      bits,
      inRange: simResult(),
    },
  ]),
  // The same call object through eth_estimateGas (what it answers beyond the range checks
  // is its own business: `answered`) and eth_sendTransaction (not a dev account).
  ...Object.entries(CALL_FIELDS).map(
    ([f, bits]): QuantityParam => ({
      method: 'eth_estimateGas',
      params: (q) => [call({ [f]: q })],
      path: `invalid argument 0.${f}`,
      bits,
      inRange: f === 'gas' ? result('0x5208') : f === 'value' ? noFunds : answered,
    }),
  ),
  ...Object.entries(CALL_FIELDS).map(
    ([f, bits]): QuantityParam => ({
      method: 'eth_sendTransaction',
      params: (q) => [call({ [f]: q })],
      path: `invalid argument 0.${f}`,
      bits,
      inRange: error(-32000, /^unknown account$/),
    }),
  ),
  // State overrides (eth_call, eth_estimateGas) and block overrides (eth_call).
  {
    method: 'eth_call',
    params: (q) => [call({}), 'latest', { [A]: { balance: q } }],
    path: `invalid argument 2.${A}.balance`,
    bits: 256,
    inRange: result('0x'),
  },
  { method: 'eth_call', params: (q) => [call({}), 'latest', { [A]: { nonce: q } }], path: `invalid argument 2.${A}.nonce`, bits: 64, inRange: nonceRule },
  {
    method: 'eth_estimateGas',
    params: (q) => [call({}), 'latest', { [A]: { balance: q } }],
    path: `invalid argument 2.${A}.balance`,
    bits: 256,
    inRange: transferGas,
  },
  { method: 'eth_estimateGas', params: (q) => [call({}), 'latest', { [A]: { nonce: q } }], path: `invalid argument 2.${A}.nonce`, bits: 64, inRange: answered },
  ...(['number', 'time', 'gasLimit', 'baseFeePerGas'] as const).map(
    (f): QuantityParam => ({
      method: 'eth_call',
      params: (q) => [call({}), 'latest', null, { [f]: q }],
      path: `invalid argument 3.${f}`,
      bits: 64,
      inRange: result('0x'),
    }),
  ),
  {
    method: 'eth_call',
    params: (q) => [call({}), 'latest', null, { blobBaseFee: q }],
    path: 'invalid argument 3.blobBaseFee',
    bits: 128,
    inRange: result('0x'),
  },
  { method: 'eth_call', params: (q) => [call({}), 'latest', null, { difficulty: q }], path: 'invalid argument 3.difficulty', bits: 256, inRange: result('0x') },
  ...WITHDRAWAL_FIELDS.map(
    (f): QuantityParam => ({
      method: 'eth_call',
      params: (q) => [call({}), 'latest', null, { withdrawals: [withdrawal(f, q)] }],
      path: `invalid argument 3.withdrawals[0].${f}`,
      bits: 64,
      inRange: result('0x'),
    }),
  ),
  // eth_simulateV1: calls, overrides, withdrawals. Per-call refusals carry geth's -380xx codes.
  {
    method: 'eth_simulateV1',
    params: (q) => sim({ calls: [call({ gas: q })] }),
    path: 'invalid argument 0.blockStateCalls[0].calls[0].gas',
    bits: 64,
    inRange: error(-38015, /^block gas limit reached/),
  },
  ...(['gasPrice', 'maxFeePerGas'] as const).map(
    (f): QuantityParam => ({
      method: 'eth_simulateV1',
      params: (q) => sim({ calls: [call({ [f]: q })] }),
      path: `invalid argument 0.blockStateCalls[0].calls[0].${f}`,
      bits: 128,
      inRange: error(-38014, /insufficient funds/),
    }),
  ),
  {
    method: 'eth_simulateV1',
    params: (q) => sim({ calls: [call({ maxPriorityFeePerGas: q })] }),
    path: 'invalid argument 0.blockStateCalls[0].calls[0].maxPriorityFeePerGas',
    bits: 128,
    inRange: error(-32602, /^max priority fee per gas higher than max fee per gas$/),
  },
  {
    method: 'eth_simulateV1',
    params: (q) => sim({ calls: [call({ maxFeePerBlobGas: q })] }),
    path: 'invalid argument 0.blockStateCalls[0].calls[0].maxFeePerBlobGas',
    bits: 128,
    inRange: simResult(),
  },
  {
    method: 'eth_simulateV1',
    params: (q) => sim({ calls: [call({ value: q })] }),
    path: 'invalid argument 0.blockStateCalls[0].calls[0].value',
    bits: 256,
    inRange: error(-38014, /insufficient funds/),
  },
  {
    method: 'eth_simulateV1',
    params: (q) => sim({ calls: [call({ nonce: q })] }),
    path: 'invalid argument 0.blockStateCalls[0].calls[0].nonce',
    bits: 64,
    inRange: simResult(),
  },
  {
    method: 'eth_simulateV1',
    params: (q) => sim({ calls: [call({ chainId: q })] }),
    path: 'invalid argument 0.blockStateCalls[0].calls[0].chainId',
    bits: 64,
    inRange: error(-32000, /^chainId does not match node's/),
  },
  {
    method: 'eth_simulateV1',
    params: (q) => sim({ calls: [call({ type: q })] }),
    path: 'invalid argument 0.blockStateCalls[0].calls[0].type',
    bits: 8,
    inRange: simResult(),
  },
  {
    method: 'eth_simulateV1',
    params: (q) => sim({ stateOverrides: { [A]: { balance: q } }, calls: [call({})] }),
    path: `invalid argument 0.blockStateCalls[0].stateOverrides.${A}.balance`,
    bits: 256,
    inRange: simResult(),
  },
  {
    method: 'eth_simulateV1',
    params: (q) => sim({ stateOverrides: { [A]: { nonce: q } }, calls: [call({})] }),
    path: `invalid argument 0.blockStateCalls[0].stateOverrides.${A}.nonce`,
    bits: 64,
    inRange: simResult(),
  },
  // Past the 256 blocks a request may span: geth's client-limit code.
  {
    method: 'eth_simulateV1',
    params: (q) => sim({ blockOverrides: { number: q } }),
    path: 'invalid argument 0.blockStateCalls[0].blockOverrides.number',
    bits: 64,
    inRange: error(-38026, /^too many blocks/),
  },
  ...(['time', 'gasLimit'] as const).map(
    (f): QuantityParam => ({
      method: 'eth_simulateV1',
      params: (q) => sim({ blockOverrides: { [f]: q } }),
      path: `invalid argument 0.blockStateCalls[0].blockOverrides.${f}`,
      bits: 64,
      inRange: simResult(),
    }),
  ),
  // Echoed in the simulated block: exactly as sent.
  {
    method: 'eth_simulateV1',
    params: (q) => sim({ blockOverrides: { baseFeePerGas: q } }),
    path: 'invalid argument 0.blockStateCalls[0].blockOverrides.baseFeePerGas',
    bits: 64,
    inRange: simResult((b, q) => expect(b.baseFeePerGas).toBe(q)),
  },
  {
    method: 'eth_simulateV1',
    params: (q) => sim({ blockOverrides: { difficulty: q } }),
    path: 'invalid argument 0.blockStateCalls[0].blockOverrides.difficulty',
    bits: 256,
    inRange: simResult((b, q) => expect(b.difficulty).toBe(q)),
  },
  {
    method: 'eth_simulateV1',
    params: (q) => sim({ blockOverrides: { blobBaseFee: q } }),
    path: 'invalid argument 0.blockStateCalls[0].blockOverrides.blobBaseFee',
    bits: 128,
    inRange: simResult(),
  },
  ...WITHDRAWAL_FIELDS.map(
    (f): QuantityParam => ({
      method: 'eth_simulateV1',
      params: (q) => sim({ blockOverrides: { withdrawals: [withdrawal(f, q)] } }),
      path: `invalid argument 0.blockStateCalls[0].blockOverrides.withdrawals[0].${f}`,
      bits: 64,
      inRange: simResult(),
    }),
  ),
];
