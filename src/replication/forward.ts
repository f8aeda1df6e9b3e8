// Writes go to the leader. On a static replica (--follow --leader URL) that is one fixed URL;
// in a cluster (--cluster) it is whichever node holds the lease now: this node itself (then
// the write is served here), another node (forwarded), or nobody during an election (the
// write waits up to --leader-wait-ms for one, then answers "no leader: election in
// progress"; it is never dropped silently). Forwarded answers come back unchanged (result,
// or error code, message and data).
//
// Forwarded: eth_sendRawTransaction, eth_sendRawTransactionSync, eth_sendTransaction, the
// pending nonce, the txpool_* namespace, and the lookups a replica cannot answer yet
// (a transaction it does not know: eth_getTransactionByHash, preconf_transactionStatus).

import { Code, NativeError, RpcError } from '../errors/index.js';
import type { Chain } from '../native.js';
import type { Method } from '../protocol/jsonrpc.js';
import type { SubscriptionHub } from '../subscriptions/hub.js';
import { SYNC_DEFAULT_TIMEOUT_MS, SYNC_MAX_TIMEOUT_MS } from '../methods/transactions.js';

const FORWARD_TIMEOUT_MS = 10_000;
/** After the leader answers a sync send, how long this node waits to show the transaction
 *  itself, so a client reading it next sees its own write. */
const SHOW_OWN_WRITE_MS = 2_000;
/** While this node is taking over (a candidate), how often it looks whether it leads yet. */
const CANDIDATE_POLL_MS = 20;

interface RpcResponse {
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** The leader could not be reached at all: the write can go to another leader. */
class Unreachable extends RpcError {}

/** JSON-RPC over HTTP to a leader, keep-alive (Node's fetch pools connections). */
export class LeaderClient {
  constructor(readonly url: string) {}

  /** The leader's result as JSON text, or its error as an RpcError (code, message, data). */
  async call(method: string, params: unknown[], timeoutMs = FORWARD_TIMEOUT_MS): Promise<string> {
    let text: string;
    let status: number;
    try {
      const res = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      status = res.status;
      text = await res.text();
    } catch (e) {
      throw new Unreachable(Code.Server, `cannot reach the leader at ${this.url}: ${errorText(e)}`);
    }
    let body: RpcResponse;
    try {
      body = JSON.parse(text) as RpcResponse;
    } catch {
      throw new RpcError(Code.Server, `the leader at ${this.url} answered HTTP ${status}: ${text.slice(0, 200)}`);
    }
    if (body.error) throw new RpcError(body.error.code, body.error.message, body.error.data);
    return JSON.stringify(body.result ?? null);
  }
}

/** Where this node's writes go. `local` is this node's own method, for when it leads. */
export interface Route {
  send(method: string, params: unknown[], local: Method, timeoutMs?: number): Promise<string>;
}

/** A static replica's fixed leader. */
export function staticRoute(url: string): Route {
  const leader = new LeaderClient(url);
  return { send: (method, params, _local, timeoutMs) => leader.call(method, params, timeoutMs) };
}

/** A node that led and no longer does answers with this message start (crates/chain
 *  ChainError::NotLeader): the write goes on to the new leader. */
const NOT_LEADER = 'not the leader';

/** A cluster's leader: whoever holds the lease now, waited for during an election. */
export function clusterRoute(chain: Chain, leaderWaitMs: number): Route {
  const clients = new Map<string, LeaderClient>();
  const client = (url: string): LeaderClient => {
    let c = clients.get(url);
    if (c === undefined) clients.set(url, (c = new LeaderClient(url)));
    return c;
  };
  return {
    async send(method, params, local, timeoutMs) {
      const deadline = Date.now() + leaderWaitMs;
      /** The term of a leader that did not take the write: wait for another one. */
      let avoid: number | undefined;
      for (;;) {
        const status = chain.replicationStatus();
        try {
          if (status?.role === 'leader') return await local.handler(params);
          const leader = status?.leader;
          if (status?.role !== 'candidate' && leader && leader.term !== avoid) {
            return await client(leader.url).call(method, params, timeoutMs);
          }
        } catch (e) {
          const passOn =
            e instanceof Unreachable || (e instanceof NativeError && e.kind === 'notLeader') || (e instanceof RpcError && e.message.startsWith(NOT_LEADER));
          if (!passOn) throw e;
          avoid = status?.leader?.term ?? avoid;
        }
        const left = deadline - Date.now();
        if (left <= 0) throw new RpcError(Code.Server, 'no leader: election in progress');
        if (status?.role === 'candidate') await new Promise((r) => setTimeout(r, Math.min(left, CANDIDATE_POLL_MS)));
        else if ((await chain.waitForLeader(left, avoid)) === null) continue;
      }
    },
  };
}

/** Milliseconds a sync send may wait, read as the leader reads it (it validates). */
function syncBudget(v: unknown): number {
  const ms = typeof v === 'number' ? v : typeof v === 'string' && /^0x[0-9a-fA-F]{1,8}$/.test(v) ? Number.parseInt(v, 16) : SYNC_DEFAULT_TIMEOUT_MS;
  return Math.min(Math.max(ms, 0), SYNC_MAX_TIMEOUT_MS);
}

export interface ForwardOptions {
  route: Route;
  /** The methods this node serves itself (their validation and local answers). */
  local: ReadonlyMap<string, Method>;
  hub: SubscriptionHub;
  chain: Chain;
}

/** The methods that go to the leader, to replace the local ones. */
export function forwardedMethods({ route, local, hub, chain }: ForwardOptions): Record<string, Method> {
  const own = (method: string): Method => local.get(method)!;
  const forward = (method: string): Method => ({ maxParams: own(method).maxParams, handler: (p) => route.send(method, p, own(method)) });
  /** The local answer, unless it is `unknown`: then the leader's (it has the pool). */
  const localFirst = (method: string, unknown: (result: string) => boolean): Method => ({
    maxParams: own(method).maxParams,
    handler: async (p) => {
      const result = await own(method).handler(p);
      return unknown(result) ? route.send(method, p, own(method)) : result;
    },
  });
  const nonce = own('eth_getTransactionCount');
  return {
    eth_sendRawTransaction: forward('eth_sendRawTransaction'),
    eth_sendTransaction: forward('eth_sendTransaction'),
    eth_sendRawTransactionSync: {
      maxParams: 2,
      handler: async (p) => {
        const started = Date.now();
        const budget = syncBudget(p[1]);
        const result = await route.send('eth_sendRawTransactionSync', p, own('eth_sendRawTransactionSync'), budget + FORWARD_TIMEOUT_MS);
        const hash = (JSON.parse(result) as { transactionHash?: string } | null)?.transactionHash;
        if (hash !== undefined) {
          // Register, then look, in one tick (as the local sync send does).
          const wait = Math.min(SHOW_OWN_WRITE_MS, Math.max(0, budget - (Date.now() - started)));
          const shown = hub.waitForTx(hash, wait);
          if (chain.getPreconfirmedReceipt(hash) === 'null') await shown;
        }
        return result;
      },
    },
    eth_getTransactionCount: {
      maxParams: nonce.maxParams,
      handler: (p) => (p[1] === 'pending' ? route.send('eth_getTransactionCount', p, nonce) : nonce.handler(p)),
    },
    eth_getTransactionByHash: localFirst('eth_getTransactionByHash', (r) => r === 'null'),
    preconf_transactionStatus: localFirst('preconf_transactionStatus', (r) => r.includes('"unknown"')),
    // The pool lives on the leader; its validation answers too.
    txpool_status: forward('txpool_status'),
    txpool_content: forward('txpool_content'),
    txpool_contentFrom: forward('txpool_contentFrom'),
    txpool_inspect: forward('txpool_inspect'),
  };
}
