// Starts the real node (real addon, real uWebSockets.js server) on a free loopback port.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, createWalletClient, defineChain, http, type Chain as ViemChain } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { defaultConfig, type Config } from '../../src/cli/index.js';
import { startNode, type RunningNode } from '../../src/server.js';

/** The well-known dev keys (anvil/Hardhat), account 0..9. */
export const DEV_KEYS = [
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
  '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba',
  '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e',
  '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356',
  '0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97',
  '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6',
] as const;

export const devAccount = (i: number) => privateKeyToAccount(DEV_KEYS[i]!);

export interface TestNode {
  node: RunningNode;
  chain: ViemChain;
  publicClient: ReturnType<typeof createPublicClient>;
  wallet(i: number): ReturnType<typeof createWalletClient>;
  datadir: string | null;
  stop(): Promise<void>;
}

export interface TestNodeOptions {
  /** Keep the store on disk in a fresh temporary directory (default: in memory). */
  onDisk?: boolean;
  datadir?: string;
  configure?(cfg: Config): void;
}

export async function startTestNode(opts: TestNodeOptions = {}): Promise<TestNode> {
  const cfg = defaultConfig();
  cfg.server.port = 0;
  cfg.server.printAccounts = false;
  // In-process servers run from the TypeScript sources, where there is no compiled worker
  // script; several event loops are tested through the real command (threads.test.ts).
  cfg.server.threads = 1;
  let datadir: string | null = null;
  if (opts.datadir) datadir = opts.datadir;
  else if (opts.onDisk) datadir = mkdtempSync(join(tmpdir(), 'preconf-test-'));
  if (datadir === null) delete cfg.chain.datadir;
  else cfg.chain.datadir = datadir;
  opts.configure?.(cfg);
  const node = await startNode(cfg);
  const chain = defineChain({
    id: node.chainId,
    name: 'preconf-test',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [node.url], webSocket: [node.wsUrl] } },
  });
  const transport = http(node.url, { retryCount: 0 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 50 });
  return {
    node,
    chain,
    publicClient,
    wallet: (i) => createWalletClient({ chain, transport, account: devAccount(i) }),
    datadir,
    async stop() {
      await node.close();
      if (datadir && opts.onDisk && !opts.datadir) rmSync(datadir, { recursive: true, force: true });
    },
  };
}

/** Runs `body` against a fresh node, and stops the node (awaited) however `body` ends. */
export async function withTestNode<T>(opts: TestNodeOptions, body: (t: TestNode) => Promise<T>): Promise<T> {
  const t = await startTestNode(opts);
  try {
    return await body(t);
  } finally {
    await t.stop();
  }
}

/** POSTs a raw body and returns status and parsed JSON (or text). */
export async function rawPost(
  url: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any; text: string; headers: Headers }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await res.text();
  let json: unknown;
  try {
    json = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers };
}

export async function rpc(url: string, method: string, params: unknown[] = []): Promise<any> {
  const r = await rawPost(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }));
  return r.json;
}
