// The only module that loads the Rust addon. Its surface is typed by the declarations
// napi-rs generates from the Rust source (native/native.d.ts, checked in CI against the
// source); this module adds the one loader and turns typed failures into NativeError.
//
// Boundary convention: every method returns the JSON text of its result (spliced into the
// response without being parsed here) or a NativeFailure {kind, message, data?}. Structured
// requests cross as JSON text (docs/architecture.md says why); their types are the Rust
// definitions serde reads them into (crates/rpc/src/params.rs), generated into native.d.ts.

import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type * as Addon from '../native/native.js';
import type {
  AccessListParams,
  CallParams,
  ChainInfo,
  EstimateParams,
  EventKind,
  FeeHistoryParams,
  ImportFailure,
  ImportOptions,
  ImportResult,
  NativeFailure,
  NativeMetrics,
  NativeNode,
  LeaderRef,
  LogFilter,
  NodeOptions,
  ReplicationOptions,
  ReplicationStatus,
  SimulateParams,
  TraceBlockParams,
  TraceCallParams,
  TraceTransactionParams,
  TransactionCall,
} from '../native/native.js';
import { NativeError } from './errors/index.js';
import { addonFile, currentPlatform, noAddonMessage, platformPackage } from '../scripts/platforms.mjs';

export type {
  ChainInfo,
  ErrorKind,
  EventKind,
  ImportFailure,
  ImportOptions,
  ImportProgressInfo,
  ImportResult,
  NativeFailure,
  NativeMetrics,
  NodeOptions,
} from '../native/native.js';
export type { LeaderRef, ReplicationOptions, ReplicationStatus } from '../native/native.js';
// The request shapes src/validation/ builds (generated from crates/rpc: params.rs, shapes/).
export type {
  AccessListEntry,
  AccountOverride,
  Authorization,
  BlockOverrides,
  LogFilter,
  SimBlockOverrides,
  SimulationBlock,
  SimulationPayload,
  StateOverrides,
  TraceCallParams,
  TraceConfig,
  TransactionCall,
  Withdrawal,
} from '../native/native.js';

export { SUPPORTED_PLATFORMS } from '../scripts/platforms.mjs';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));

/** Finds the addon: a local build first, then the prebuilt platform package. */
function loadAddon(): typeof Addon {
  const platform = currentPlatform();
  const file = addonFile(platform);
  for (const dir of [join(here, '..', 'native'), join(here, '..', '..', 'native')]) {
    const path = join(dir, file);
    if (existsSync(path)) return require(path) as typeof Addon;
  }
  try {
    return require(platformPackage(platform)) as typeof Addon;
  } catch (err) {
    throw new Error(noAddonMessage(platform), { cause: err });
  }
}

let addon: typeof Addon | undefined;
const loaded = (): typeof Addon => (addon ??= loadAddon());

/** Unwraps the boundary convention: result JSON text, or throws NativeError. */
export function unwrap(out: string | NativeFailure): string {
  if (typeof out === 'string') return out;
  throw new NativeError(out.kind, out.message, out.data);
}

const unwrapAsync = async (out: Promise<string | NativeFailure>): Promise<string> => unwrap(await out);

/** A read answered now, or (on a fork, when it needs the upstream) by a promise. */
type Later = string | NativeFailure | Promise<string | NativeFailure>;
const unwrapLater = (out: Later): string | Promise<string> => (out instanceof Promise ? unwrapAsync(out) : unwrap(out));

/**
 * Seats the uWebSockets.js guard (crates/uws-guard) on a listen socket's connections: the
 * requests uWS would leave unanswered (HTTP/1.0, unknown verbs, malformed heads) reach
 * `GET /.refused/*` or go on as HTTP/1.1. Throws when the loaded uWS is another build.
 */
export function guardHttp(listenSocket: unknown): void {
  loaded().guardHttp(listenSocket);
}

/** The guard on a WebSocket context: RFC 6455 violations and oversized messages are closed with 1002/1007/1009. */
export function guardWebsocket(context: unknown, maxMessageBytes: number): void {
  loaded().guardWebsocket(context, maxMessageBytes);
}

/** `preconf-node verify`: the head's state root recomputed and compared (see commands/verify.ts). */
export function verifyStore(datadir: string): Promise<Addon.VerifyReport> {
  return loaded().verifyStore(datadir);
}

/** Imports a blocks file into a datadir (`preconf-node import`), off the event loop. */
export function importChain(options: ImportOptions, onProgress?: Addon.ProgressCallback): Promise<ImportResult | ImportFailure> {
  return loaded().importChain(options, onProgress);
}

/** Sends the addon's log lines (crates/chain's `log`: the builder, the store, the pool
 *  journal, replication and the cluster) at `minLevel` and above into the node's pino
 *  logger, with their fields; set before opening a node so that its start-up lines arrive
 *  too. Here rather than in src/log/, which this module's errors already use. */
export function forwardRustLogs(log: Logger, minLevel: Addon.LogLevel): void {
  loaded().setLogSink(minLevel, (level, component, message, fieldsJson) => {
    let fields: Record<string, unknown> = {};
    try {
      fields = JSON.parse(fieldsJson) as Record<string, unknown>;
    } catch {
      fields = { fields: fieldsJson };
    }
    log[level]({ component, ...fields }, message);
  });
}

/** `preconf-node export`: blocks of a stopped node's datadir as a blocks file (see commands/export.ts). */
export function exportChain(options: Addon.ExportOptions): Promise<Addon.ExportResult> {
  return loaded().exportChain(options);
}

/** The chain's defaults for the options the CLI does not set. */
export function defaultChainOptions(): NodeOptions {
  return loaded().defaultOptions();
}

/** The chain, as the protocol layer sees it. Block selectors are canonical strings
 *  (see validation/block.ts): a tag, a 0x quantity or a 0x hash. */
export class Chain {
  /** No pool journal to wait for: submissions are answered on the event loop. */
  private readonly submitsInline: boolean;
  /** The reads answered on the event loop are the addon's free functions, given the node's
   *  handle: a class method costs more to enter than such a read takes (read_methods!). */
  private readonly reads = loaded();
  private readonly node: number;

  private constructor(private readonly raw: NativeNode) {
    this.submitsInline = raw.info().submitsInline;
    this.node = raw.handle();
  }

  static open(options: NodeOptions): Chain {
    return new Chain(loaded().NativeNode.open(options));
  }

  /** Attaches a worker thread to the node another thread of this process opened. */
  static attach(handle: number): Chain {
    return new Chain(loaded().NativeNode.attach(handle));
  }

  /** What `attach` takes in a worker thread. */
  handle(): number {
    return this.raw.handle();
  }

  info = (): ChainInfo => this.raw.info();
  blockNumber = (): string => this.raw.blockNumber();
  coinbase = (): string => this.raw.coinbase();
  /** null while healthy, otherwise why the node is degraded. */
  health = (): string | null => this.raw.health();
  getBalance = (address: string, block: string): string | Promise<string> => unwrapLater(this.reads.readBalance(this.node, address, block));
  getTransactionCount = (address: string, block: string): string | Promise<string> => unwrapLater(this.reads.readTransactionCount(this.node, address, block));
  getCode = (address: string, block: string): string | Promise<string> => unwrapLater(this.reads.readCode(this.node, address, block));
  getStorageAt = (address: string, slot: string, block: string): string | Promise<string> =>
    unwrapLater(this.reads.readStorageAt(this.node, address, slot, block));
  getProof = (address: string, keys: string[], block: string, client?: number): Promise<string> => unwrapAsync(this.raw.getProof(address, keys, block, client));
  /** Hashes only: answered on the event loop (on a fork, off it when the upstream must answer).
   * Full objects grow with the block: off it. */
  getBlock = (block: string, full: boolean, client?: number): string | Promise<string> =>
    full ? unwrapAsync(this.raw.getBlockFull(block, client)) : unwrapLater(this.reads.readBlock(this.node, block));
  getBlockReceipts = (block: string, client?: number): Promise<string> => unwrapAsync(this.raw.getBlockReceipts(block, client));
  getBlockTransactionCount = (block: string): string | Promise<string> => unwrapLater(this.reads.readBlockTransactionCount(this.node, block));
  getTransactionByBlockAndIndex = (block: string, index: string): string | Promise<string> =>
    unwrapLater(this.reads.readTransactionByBlockAndIndex(this.node, block, index));
  getTransaction = (hash: string): string | Promise<string> => unwrapLater(this.reads.readTransaction(this.node, hash));
  getTransactionReceipt = (hash: string): string | Promise<string> => unwrapLater(this.reads.readTransactionReceipt(this.node, hash));
  /** Pre-confirmed or sealed, whatever --preconf-receipts says. */
  getPreconfirmedReceipt = (hash: string): string => unwrap(this.raw.getPreconfirmedReceipt(hash));
  feeHistory = (request: FeeHistoryParams, client?: number): Promise<string> => unwrapAsync(this.raw.feeHistory(JSON.stringify(request), client));
  gasPrice = (): string => unwrap(this.raw.gasPrice());
  maxPriorityFeePerGas = (): string => unwrap(this.raw.maxPriorityFeePerGas());
  txStatus = (hash: string): string => unwrap(this.raw.txStatus(hash));

  /** `client`: the caller's key for the work pools' turns and shares (CallContext). */
  call = (request: CallParams, client?: number): Promise<string> => unwrapAsync(this.raw.call(JSON.stringify(request), client));
  estimateGas = (request: EstimateParams, client?: number): Promise<string> => unwrapAsync(this.raw.estimateGas(JSON.stringify(request), client));
  simulate = (request: SimulateParams, client?: number): Promise<string> => unwrapAsync(this.raw.simulate(JSON.stringify(request), client));
  sendRawTransaction = (raw: string): string | Promise<string> =>
    this.submitsInline ? unwrap(this.raw.sendRawTransactionInline(raw)) : unwrapAsync(this.raw.sendRawTransaction(raw));
  /** keccak256 of a raw transaction's bytes (hex), decoding nothing. */
  transactionHash = (raw: string): string => JSON.parse(unwrap(this.raw.transactionHash(raw))) as string;
  /** eth_sendRawTransaction's checks without admitting; the hash. */
  checkRawTransaction = (raw: string): string => JSON.parse(unwrap(this.raw.checkRawTransaction(raw))) as string;
  sendTransaction = (request: TransactionCall): Promise<string> => unwrapAsync(this.raw.sendTransaction(JSON.stringify(request)));
  accounts = (): string => this.raw.accounts();
  getLogs = (filter: LogFilter, client?: number): Promise<string> => unwrapAsync(this.raw.getLogs(JSON.stringify(filter), client));
  traceCall = (request: TraceCallParams, client?: number): Promise<string> => unwrapAsync(this.raw.traceCall(JSON.stringify(request), client));
  traceTransaction = (request: TraceTransactionParams, client?: number): Promise<string> =>
    unwrapAsync(this.raw.traceTransaction(JSON.stringify(request), client));
  traceBlock = (request: TraceBlockParams, client?: number): Promise<string> => unwrapAsync(this.raw.traceBlock(JSON.stringify(request), client));
  createAccessList = (request: AccessListParams, client?: number): Promise<string> => unwrapAsync(this.raw.createAccessList(JSON.stringify(request), client));

  txpoolStatus = (): string => unwrap(this.raw.txpoolStatus());
  /** The Engine API (src/engine/): JSON text in, as crates/rpc/src/engine.rs reads it. */
  engineForkchoiceUpdated = (version: number, state: string, attributes: string | null): Promise<string> =>
    unwrapAsync(this.raw.engineForkchoiceUpdated(version, state, attributes));
  engineGetPayload = (version: number, id: string): Promise<string> => unwrapAsync(this.raw.engineGetPayload(version, id));
  engineNewPayload = (version: number, payload: string, hashes: string | null, beaconRoot: string | null, requests: string | null): Promise<string> =>
    unwrapAsync(this.raw.engineNewPayload(version, payload, hashes, beaconRoot, requests));
  engineGetPayloadBodiesByHash = (hashes: string[]): Promise<string> => unwrapAsync(this.raw.engineGetPayloadBodiesByHash(JSON.stringify(hashes)));
  engineGetPayloadBodiesByRange = (start: string, count: string): Promise<string> => unwrapAsync(this.raw.engineGetPayloadBodiesByRange(start, count));
  txpoolContent = (): Promise<string> => unwrapAsync(this.raw.txpoolContent());
  txpoolContentFrom = (address: string): Promise<string> => unwrapAsync(this.raw.txpoolContentFrom(address));
  txpoolInspect = (): Promise<string> => unwrapAsync(this.raw.txpoolInspect());
  /** The test methods (--dev): each answers like anvil's (src/methods/dev.ts). */
  devEnabled = (): boolean => this.raw.devEnabled();
  devSetBalance = (address: string, value: string, add: boolean): Promise<string> => unwrapAsync(this.raw.devSetBalance(address, value, add));
  devSetNonce = (address: string, nonce: string): Promise<string> => unwrapAsync(this.raw.devSetNonce(address, nonce));
  devSetCode = (address: string, code: string): Promise<string> => unwrapAsync(this.raw.devSetCode(address, code));
  devSetStorageAt = (address: string, slot: string, value: string): Promise<string> => unwrapAsync(this.raw.devSetStorageAt(address, slot, value));
  devDealErc20 = (account: string, token: string, amount: string): Promise<string> => unwrapAsync(this.raw.devDealErc20(account, token, amount));
  devSetErc20Allowance = (owner: string, spender: string, token: string, amount: string): Promise<string> =>
    unwrapAsync(this.raw.devSetErc20Allowance(owner, spender, token, amount));
  devImpersonate = (address: string, on: boolean): string => unwrap(this.raw.devImpersonate(address, on));
  devAutoImpersonate = (on: boolean): string => unwrap(this.raw.devAutoImpersonate(on));
  devSendUnsigned = (request: TransactionCall): Promise<string> => unwrapAsync(this.raw.devSendUnsigned(JSON.stringify(request)));
  devMine = (blocks: string, interval?: string, timestamp?: string): Promise<string> => unwrapAsync(this.raw.devMine(blocks, interval, timestamp));
  devMineDetailed = (blocks: string, timestamp?: string): Promise<string> => unwrapAsync(this.raw.devMineDetailed(blocks, timestamp));
  devIncreaseTime = (seconds: string): Promise<string> => unwrapAsync(this.raw.devIncreaseTime(seconds));
  devSetTime = (timestamp: string): Promise<string> => unwrapAsync(this.raw.devSetTime(timestamp));
  devSetNextBlockTimestamp = (timestamp: string): Promise<string> => unwrapAsync(this.raw.devSetNextBlockTimestamp(timestamp));
  devSetNextBlockBaseFee = (fee: string): Promise<string> => unwrapAsync(this.raw.devSetNextBlockBaseFee(fee));
  devSetCoinbase = (address: string): Promise<string> => unwrapAsync(this.raw.devSetCoinbase(address));
  devSetMinGasPrice = (): string => unwrap(this.raw.devSetMinGasPrice());
  devNodeInfo = (): string => unwrap(this.raw.devNodeInfo());
  devMetadata = (): Promise<string> => unwrapAsync(this.raw.devMetadata());
  devSetBlockGasLimit = (gasLimit: string): Promise<string> => unwrapAsync(this.raw.devSetBlockGasLimit(gasLimit));
  devSetBlockTimestampInterval = (seconds?: string): Promise<string> => unwrapAsync(this.raw.devSetBlockTimestampInterval(seconds));
  devSetAutomine = (on: boolean): Promise<string> => unwrapAsync(this.raw.devSetAutomine(on));
  devSetIntervalMining = (seconds: string): Promise<string> => unwrapAsync(this.raw.devSetIntervalMining(seconds));
  devAutomine = (): Promise<string> => unwrapAsync(this.raw.devAutomine());
  devIntervalMining = (): Promise<string> => unwrapAsync(this.raw.devIntervalMining());
  devSnapshot = (): Promise<string> => unwrapAsync(this.raw.devSnapshot());
  devRevert = (id: string): Promise<string> => unwrapAsync(this.raw.devRevert(id));
  devReset = (fork: boolean, url?: string, block?: string): Promise<string> => unwrapAsync(this.raw.devReset(fork, url, block));
  devDropTransaction = (hash: string): Promise<string> => unwrapAsync(this.raw.devDropTransaction(hash));
  devDropAllTransactions = (): Promise<string> => unwrapAsync(this.raw.devDropAllTransactions());
  devDropTransactionsFrom = (sender: string): Promise<string> => unwrapAsync(this.raw.devDropTransactionsFrom(sender));
  devDumpState = (): Promise<string> => unwrapAsync(this.raw.devDumpState());
  devLoadState = (dump: string): Promise<string> => unwrapAsync(this.raw.devLoadState(dump));

  /** The addon's figures for GET /metrics (builder histograms, pool, store, work queues). */
  metrics = (): NativeMetrics => this.raw.metrics();

  /** Replication over NATS JetStream (crates/replication): start, stop, where it stands. */
  replicationStart = (options: ReplicationOptions): void => this.raw.replicationStart(options);
  replicationStop = (): Promise<void> => this.raw.replicationStop();
  /** null when this node does not replicate. */
  replicationStatus = (): ReplicationStatus | null => this.raw.replicationStatus();
  /** A cluster's leader once one other than the one of term `notTerm` is known; null after `withinMs`. */
  waitForLeader = async (withinMs: number, notTerm?: number): Promise<LeaderRef | null> =>
    (await this.raw.waitForLeader(Math.max(0, Math.round(withinMs)), notTerm ?? null)) ?? null;

  /** Receives chain events (pre-confirmations, sealed blocks, pooled transactions). */
  subscribeEvents(callback: Addon.EventCallback): void {
    this.raw.subscribeEvents(callback);
  }
  /** Which event payloads the addon should render for this event loop. */
  setEventInterest(kinds: EventKind[]): void {
    this.raw.setEventInterest(kinds);
  }

  /** Follows a sequencer's flashblocks (--flashblocks-url; the node opened with followFlashblocks). */
  flashblocksFollowStart = (options: Addon.FlashblocksFollowOptions): void => this.raw.flashblocksFollowStart(options);
  /** null when this node does not follow flashblocks. */
  flashblocksFollowStatus = (): Addon.FlashblocksFollowStatus | null => this.raw.flashblocksFollowStatus();

  /** Whether flashblocks carry a state root and block hash (--flashblocks.disable-state-root). */
  setFlashblocksStateRoot(on: boolean): void {
    this.raw.setFlashblocksStateRoot(on);
  }
  /** The opening thread stops the builder and flushes the store; others just detach. */
  close(): void {
    this.raw.close();
  }
}
