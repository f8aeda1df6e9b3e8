// A replica's writes go to the leader (--leader): eth_sendRawTransaction,
// eth_sendRawTransactionSync and eth_sendTransaction are forwarded as they came and answered
// with the leader's result or error, code, message and data unchanged. So are the reads that
// depend on the leader's transaction pool, which a replica does not have: the pending nonce
// (eth_getTransactionCount with `pending`), and a transaction the replica does not know yet
// (eth_getTransactionByHash, preconf_transactionStatus), and the txpool_* namespace.

import { Code, RpcError } from '../errors/index.js';
import type { Chain } from '../native.js';
import type { Method } from '../protocol/jsonrpc.js';
import type { SubscriptionHub } from '../subscriptions/hub.js';
import { SYNC_DEFAULT_TIMEOUT_MS, SYNC_MAX_TIMEOUT_MS } from '../methods/transactions.js';
import { errorText } from './stream.js';

const FORWARD_TIMEOUT_MS = 10_000;
/** After the leader answers a sync send, how long the replica waits to show the transaction
 *  itself, so a client reading this replica next sees its own write. */
const SHOW_OWN_WRITE_MS = 2_000;

interface RpcResponse {
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** JSON-RPC over HTTP to the leader, keep-alive (Node's fetch pools connections). */
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
      throw new RpcError(Code.Server, `cannot reach the leader at ${this.url}: ${errorText(e)}`);
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

/** Milliseconds a sync send may wait, read as the leader reads it (it validates). */
function syncBudget(v: unknown): number {
  const ms = typeof v === 'number' ? v : typeof v === 'string' && /^0x[0-9a-fA-F]{1,8}$/.test(v) ? Number.parseInt(v, 16) : SYNC_DEFAULT_TIMEOUT_MS;
  return Math.min(Math.max(ms, 0), SYNC_MAX_TIMEOUT_MS);
}

export interface ForwardOptions {
  leader: LeaderClient;
  /** The methods this replica serves itself (their validation and local answers). */
  local: ReadonlyMap<string, Method>;
  hub: SubscriptionHub;
  chain: Chain;
}

/** The forwarded methods, to replace the local ones on a replica. */
export function forwardedMethods({ leader, local, hub, chain }: ForwardOptions): Record<string, Method> {
  const forward = (method: string, maxParams: number): Method => ({ maxParams, handler: (p) => leader.call(method, p) });
  /** The local answer, unless it is `unknown`: then the leader's (it has the pool). */
  const localFirst = (method: string, unknown: (result: string) => boolean): Method => {
    const own = local.get(method)!;
    return {
      maxParams: own.maxParams,
      handler: async (p) => {
        const result = await own.handler(p);
        return unknown(result) ? leader.call(method, p) : result;
      },
    };
  };
  const nonce = local.get('eth_getTransactionCount')!;
  return {
    eth_sendRawTransaction: forward('eth_sendRawTransaction', 1),
    eth_sendTransaction: forward('eth_sendTransaction', 1),
    eth_sendRawTransactionSync: {
      maxParams: 2,
      handler: async (p) => {
        const started = Date.now();
        const budget = syncBudget(p[1]);
        const result = await leader.call('eth_sendRawTransactionSync', p, budget + FORWARD_TIMEOUT_MS);
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
      handler: (p) => (p[1] === 'pending' ? leader.call('eth_getTransactionCount', p) : nonce.handler(p)),
    },
    eth_getTransactionByHash: localFirst('eth_getTransactionByHash', (r) => r === 'null'),
    preconf_transactionStatus: localFirst('preconf_transactionStatus', (r) => r.includes('"unknown"')),
    // The pool lives on the leader; its validation answers too.
    txpool_status: forward('txpool_status', 0),
    txpool_content: forward('txpool_content', 0),
    txpool_contentFrom: forward('txpool_contentFrom', 1),
    txpool_inspect: forward('txpool_inspect', 0),
  };
}
