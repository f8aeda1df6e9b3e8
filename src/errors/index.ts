// Every failure a client can see, and the one table that maps native (Rust) failures to
// JSON-RPC codes. Messages follow geth's wording: clients such as viem match on the text.

import type { ErrorKind, Profile } from '../../native/native.js';
import { componentLogger } from '../log/index.js';

export type { Profile } from '../../native/native.js';

export const Code = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  Internal: -32603,
  /** geth's generic server error: execution and state failures. */
  Server: -32000,
  /** eth_simulateV1 per-call VM error, and the simulate timeout. */
  SimulateVmError: -32015,
  Timeout: -32016,
  /** A documented limit (range, result size, a full work queue, a rate limit). */
  LimitExceeded: -32005,
  /** A batch's answer passed its size limit (geth's code and words: "response too large"). */
  ResponseTooLarge: -32003,
  /** History older than the node keeps (geth's code and words: "pruned history unavailable"). */
  PrunedHistory: 4444,
} as const;

/** An error that becomes a JSON-RPC error object as it is. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcError';
  }

  toJSON(): { code: number; message: string; data?: unknown } {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }
}

/** Raised by the transport when the request itself must be refused with an HTTP status. */
export class HttpError extends Error {
  constructor(
    readonly status: string,
    message: string,
  ) {
    super(message);
  }
}

/** A client over its rate limit: HTTP 429 with Retry-After, and `body` (JSON-RPC errors
 *  carrying the request ids) as the answer. */
export class RateLimitedError extends HttpError {
  constructor(
    readonly retryAfterSeconds: number,
    readonly body: string,
  ) {
    super('429 Too Many Requests', 'rate limited');
  }
}

/** A failure reported by the addon: a stable `kind`, geth's message, optional data. */
export class NativeError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly data?: string,
  ) {
    super(message);
    this.name = 'NativeError';
  }
}

/** Native failure kind (generated from crates/napi/src/failure.rs) -> JSON-RPC code.
 *  A `Record` over the generated union: a kind added in Rust fails to compile here. */
const NATIVE_CODES: Record<ErrorKind, number> = {
  invalidParams: Code.InvalidParams,
  headerNotFound: Code.Server,
  reverted: Code.Server, // the product's interface fixes -32000 (geth uses 3)
  halted: Code.Server,
  rejected: Code.Server,
  limitExceeded: Code.LimitExceeded,
  unavailable: Code.Server, // geth: -32000 "historical state … is not available"
  notFound: Code.Server, // geth: "transaction not found", "block #5 not found"
  pruned: Code.PrunedHistory,
  storeFault: Code.Server, // the disk is full or failing: transactions are refused until it writes again
  timeout: Code.Server, // geth: a trace's "execution timeout"
  overloaded: Code.LimitExceeded,
  notLeader: Code.Server, // a cluster's follower sends the transaction on to the leader first
  config: Code.Internal,
  testMethodFailed: Code.Internal, // anvil's code for a test method it could not carry out
  upstream: Code.Server, // a fork's upstream stalled, refused or rate-limited: the message names it
  // The Engine API's own codes (execution-apis, engine/common.md).
  unknownPayload: -38001,
  invalidForkchoiceState: -38002,
  invalidPayloadAttributes: -38003,
  tooLargeRequest: -38004,
  unsupportedFork: -38005,
  internal: Code.Internal,
  simNonceTooLow: -38010,
  simNonceTooHigh: -38011,
  simBaseFeeTooLow: -38012,
  simIntrinsicGasTooLow: -38013,
  simInsufficientFunds: -38014,
  simBlockGasLimitExceeded: -38015,
  simBlockNumberInvalid: -38020,
  simTimestampInvalid: -38021,
  simPrecompileSelfReference: -38022,
  simPrecompileDuplicateAddress: -38023,
  simClientLimitExceeded: -38026,
  simSenderNotEoa: -38024,
  simMaxInitCodeSizeExceeded: -38025,
  simGeneric: Code.Server,
  // With `validation`, a sender whose nonce is at its maximum: the request's fault (geth: -32603).
  simInternalError: Code.InvalidParams,
  simTimeout: Code.Timeout,
};

/** Where `--profile geth` answers with geth's code instead of the product's
 *  (docs/compat.md lists every difference between the profiles). */
const GETH_CODES: Partial<Record<ErrorKind, number>> = {
  reverted: 3, // geth's revert code in eth_call/eth_estimateGas (ethereum/go-ethereum internal/ethapi)
  simInternalError: Code.Internal, // geth's "nonce has max value" in eth_simulateV1 (fixture ethSimulate-overflow-nonce-validation)
};

/** The JSON-RPC code of a native failure under a profile. */
export function nativeCode(kind: ErrorKind, profile: Profile = 'default'): number {
  return (profile === 'geth' ? GETH_CODES[kind] : undefined) ?? NATIVE_CODES[kind];
}

export type Logger = (message: string, error?: unknown) => void;

export const logInternal: Logger = (message, error) => {
  componentLogger('rpc').error({ err: error }, `internal error: ${message}`);
};

/** Turns anything thrown by a handler into the JSON-RPC error the client sees. */
export function toRpcError(err: unknown, log: Logger = logInternal, profile: Profile = 'default'): RpcError {
  if (err instanceof RpcError) return err;
  if (err instanceof NativeError) {
    const code = nativeCode(err.kind, profile);
    // A test method that could not do what it was asked is the caller's case, not the node's.
    if (code === Code.Internal && err.kind !== 'testMethodFailed') {
      log(`native ${err.kind}: ${err.message}`);
      return new RpcError(Code.Internal, err.message || 'internal error');
    }
    return new RpcError(code, err.message, err.data);
  }
  log('unexpected exception', err);
  return new RpcError(Code.Internal, 'internal error');
}

export const invalidParams = (message: string): RpcError => new RpcError(Code.InvalidParams, message);
