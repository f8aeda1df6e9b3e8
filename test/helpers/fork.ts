// A forked test node: the settings every fork test uses (a short request budget and
// backoff, so that failures show within a test's time; the test methods on; blocks every
// 200 ms), and an upstream (anvil) behind the counting, fault-injecting proxy.

import { startAnvil, type Anvil } from './anvil.js';
import { startTestNode, type TestNode, type TestNodeOptions } from './node.js';
import { startUpstreamProxy, type UpstreamProxy } from './upstream-proxy.js';
import type { Config } from '../../src/cli/index.js';

export interface ForkNodeOptions {
  /** Attempts after the first (default 2). */
  retries?: number;
  blockNumber?: bigint;
  onDisk?: boolean;
  configure?: (cfg: Config) => void;
}

export function startForkNode(upstreamUrl: string, o: ForkNodeOptions = {}): Promise<TestNode> {
  const opts: TestNodeOptions = {
    onDisk: o.onDisk,
    configure: (cfg) => {
      cfg.chain.forkUrl = upstreamUrl;
      if (o.blockNumber !== undefined) cfg.chain.forkBlockNumber = Number(o.blockNumber);
      cfg.chain.forkTimeoutMs = 400;
      cfg.chain.forkRetries = o.retries ?? 2;
      cfg.chain.forkRetryBackoffMs = 20;
      cfg.chain.dev = true;
      cfg.chain.blockTimeMs = 200;
      o.configure?.(cfg);
    },
  };
  return startTestNode(opts);
}

export interface ProxiedUpstream {
  anvil: Anvil;
  proxy: UpstreamProxy;
  stop(): Promise<void>;
}

/** anvil behind the proxy (each its own process). */
export async function startProxiedUpstream(anvilArgs: string[] = []): Promise<ProxiedUpstream> {
  const anvil = await startAnvil(anvilArgs);
  const proxy = await startUpstreamProxy(anvil.url);
  return {
    anvil,
    proxy,
    stop: async () => {
      await proxy.stop();
      await anvil.stop();
    },
  };
}
