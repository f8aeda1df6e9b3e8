// The only module that loads the Rust addon. It gives the rest of the TypeScript side a
// typed facade and turns the addon's error strings into NativeError values.
//
// Boundary convention: every addon method returns a string (or a Promise of one). A string
// starting with 'E' is an error, `E{"kind","message","data"?}`; anything else is the JSON
// text of the result, spliced into the response without being parsed here.

import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NativeError } from './errors/index.js';

/** The raw addon class, as crates/napi exports it. */
interface RawNode {
  info(): string;
  health(): string;
  blockNumber(): string;
  getBalance(address: string, block: string): string;
  getTransactionCount(address: string, block: string): string;
  getCode(address: string, block: string): string;
  getStorageAt(address: string, slot: string, block: string): string;
  getBlock(block: string, full: boolean): string;
  getBlockReceipts(block: string): string;
  getTransaction(hash: string): string;
  getTransactionReceipt(hash: string): string;
  call(request: string): Promise<string>;
  estimateGas(request: string): Promise<string>;
  simulate(request: string): Promise<string>;
  sendRawTransaction(raw: string): Promise<string>;
  sendTransaction(request: string): Promise<string>;
  accounts(): string;
  getLogs(filter: string): Promise<string>;
  feeHistory(request: string): string;
  gasPrice(): string;
  maxPriorityFeePerGas(): string;
  txStatus(hash: string): string;
  handle(): number;
  subscribeEvents(callback: (kind: string, payload: string) => void): void;
  setEventInterest(mask: number): void;
  close(): void;
}

interface RawAddon {
  NativeNode: { open(config: string): RawNode; attach(handle: number): RawNode };
}

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));

/** Finds the addon: a local build first, then the prebuilt platform package. */
function loadAddon(): RawAddon {
  const file = `preconf-node.${process.platform}-${process.arch}-gnu.node`;
  for (const dir of [join(here, '..', 'native'), join(here, '..', '..', 'native')]) {
    const path = join(dir, file);
    if (existsSync(path)) return require(path) as RawAddon;
  }
  try {
    return require(`preconf-node-${process.platform}-${process.arch}-gnu`) as RawAddon;
  } catch (err) {
    throw new Error(
      `preconf-node: no native addon for ${process.platform}-${process.arch} ` +
        `(looked for native/${file} and the prebuilt package); run "npm run build:native"`,
      { cause: err },
    );
  }
}

let addon: RawAddon | undefined;

/** Unwraps the boundary convention: result JSON text, or throws NativeError. */
export function unwrap(out: string): string {
  if (out.charCodeAt(0) !== 69 /* 'E' */) return out;
  const e = JSON.parse(out.slice(1)) as { kind: string; message: string; data?: string };
  throw new NativeError(e.kind, e.message, e.data);
}

async function unwrapAsync(out: Promise<string>): Promise<string> {
  return unwrap(await out);
}

/** Settings the addon needs (the chain side of the CLI flags). */
export interface ChainConfig {
  datadir: string | null; // null: in memory (--ephemeral)
  genesis: string | null; // genesis.json contents; null: the embedded dev chain
  preconf: boolean;
  preconfIntervalMs: number;
  blockTimeMs: number;
  gasCap: number;
  finalityDepth: number;
  poolMaxPerSender: number;
  poolMaxTotal: number;
  simulateMaxBlocks: number;
  simulateMaxCallsPerBlock: number;
  simulateMaxCalls: number;
  simulateTimeoutMs: number;
  logsMaxRange: number;
  logsMaxResults: number;
}

export interface ChainInfo {
  chainId: number;
  genesisHash: string;
  head: number;
  clientVersion: string;
  accounts: { address: string; privateKey: string }[];
}

/** Event kinds the builder reports (bit positions of the interest mask). */
export const EventKind = {
  newHeads: 1,
  logs: 2,
  flashblocks: 4,
  flashblockTxs: 8,
  pendingLogs: 16,
  pendingTxs: 32,
} as const;

/** The chain, as the protocol layer sees it. Block selectors are canonical strings
 *  (see validation/block.ts): a tag, a decimal number or a 0x hash. */
export class Chain {
  private constructor(private readonly raw: RawNode) {}

  static open(config: ChainConfig): Chain {
    addon ??= loadAddon();
    return new Chain(unwrapNode(() => addon!.NativeNode.open(JSON.stringify(config))));
  }

  /** Attaches a worker thread to the node another thread of this process opened. */
  static attach(handle: number): Chain {
    addon ??= loadAddon();
    return new Chain(addon.NativeNode.attach(handle));
  }

  /** What `attach` takes in a worker thread. */
  handle(): number {
    return this.raw.handle();
  }

  info(): ChainInfo {
    return JSON.parse(unwrap(this.raw.info())) as ChainInfo;
  }
  blockNumber = (): string => unwrap(this.raw.blockNumber());
  /** null while healthy, otherwise why the node is degraded. */
  health = (): string | null => JSON.parse(unwrap(this.raw.health())) as string | null;
  getBalance = (address: string, block: string): string => unwrap(this.raw.getBalance(address, block));
  getTransactionCount = (address: string, block: string): string =>
    unwrap(this.raw.getTransactionCount(address, block));
  getCode = (address: string, block: string): string => unwrap(this.raw.getCode(address, block));
  getStorageAt = (address: string, slot: string, block: string): string =>
    unwrap(this.raw.getStorageAt(address, slot, block));
  getBlock = (block: string, full: boolean): string => unwrap(this.raw.getBlock(block, full));
  getBlockReceipts = (block: string): string => unwrap(this.raw.getBlockReceipts(block));
  getTransaction = (hash: string): string => unwrap(this.raw.getTransaction(hash));
  getTransactionReceipt = (hash: string): string => unwrap(this.raw.getTransactionReceipt(hash));
  feeHistory = (request: object): string => unwrap(this.raw.feeHistory(JSON.stringify(request)));
  gasPrice = (): string => unwrap(this.raw.gasPrice());
  maxPriorityFeePerGas = (): string => unwrap(this.raw.maxPriorityFeePerGas());
  txStatus = (hash: string): string => unwrap(this.raw.txStatus(hash));

  call = (request: object): Promise<string> => unwrapAsync(this.raw.call(JSON.stringify(request)));
  estimateGas = (request: object): Promise<string> => unwrapAsync(this.raw.estimateGas(JSON.stringify(request)));
  simulate = (request: object): Promise<string> => unwrapAsync(this.raw.simulate(JSON.stringify(request)));
  sendRawTransaction = (raw: string): Promise<string> => unwrapAsync(this.raw.sendRawTransaction(raw));
  sendTransaction = (request: object): Promise<string> => unwrapAsync(this.raw.sendTransaction(JSON.stringify(request)));
  accounts = (): string => this.raw.accounts();
  getLogs = (filter: object): Promise<string> => unwrapAsync(this.raw.getLogs(JSON.stringify(filter)));

  /** Receives builder events (pre-confirmations, sealed blocks, pooled transactions). */
  subscribeEvents(callback: (kind: string, payload: string) => void): void {
    this.raw.subscribeEvents(callback);
  }
  /** Which event payloads the addon should render (a mask of EventKind bits). */
  setEventInterest(mask: number): void {
    this.raw.setEventInterest(mask);
  }
  /** The opening thread stops the builder and flushes the store; others just detach. */
  close(): void {
    this.raw.close();
  }
}

function unwrapNode(open: () => RawNode | string): RawNode {
  const node = open();
  if (typeof node === 'string') {
    unwrap(node);
    throw new Error('unreachable');
  }
  return node;
}
