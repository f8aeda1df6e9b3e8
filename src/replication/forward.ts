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
//
// A node that does not build and has no leader (an OP Stack RPC node) sends transactions to
// its sequencer (--rollup.sequencerhttp, op-geth's flag), or refuses them: see the end.

import { Code, NativeError, RpcError } from '../errors/index.js';
import type { Chain } from '../native.js';
import type { Method } from '../protocol/jsonrpc.js';
import type { SubscriptionHub } from '../subscriptions/hub.js';
import { SYNC_DEFAULT_TIMEOUT_MS, SYNC_MAX_TIMEOUT_MS, syncTimedOut, syncTimeout } from '../methods/transactions.js';
import { argPath, hexBytes } from '../validation/primitives.js';

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

/** JSON-RPC over HTTP to a leader (or, on an RPC node, the sequencer: `target` names it in
 *  errors), keep-alive (Node's fetch pools connections). */
export class LeaderClient {
  constructor(
    readonly url: string,
    readonly target: 'leader' | 'sequencer' = 'leader',
  ) {}

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
      throw new Unreachable(Code.Server, `cannot reach the ${this.target} at ${this.url}: ${errorText(e)}`);
    }
    let body: RpcResponse;
    try {
      body = JSON.parse(text) as RpcResponse;
    } catch {
      throw new RpcError(Code.Server, `the ${this.target} at ${this.url} answered HTTP ${status}: ${text.slice(0, 200)}`);
    }
    if (body.error) throw new RpcError(body.error.code, body.error.message, body.error.data);
    return JSON.stringify(body.result ?? null);
  }
}

/** Where this node's writes go. `local` is this node's own method, for when it leads. */
export interface Route {
  send(method: string, params: unknown[], local: Method, timeoutMs?: number): Promise<string>;
}

/** A static replica's fixed leader, or an RPC node's sequencer. */
export function staticRoute(url: string, target: LeaderClient['target'] = 'leader'): Route {
  const leader = new LeaderClient(url, target);
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

/** geth's, reth's and this node's pool answer for a transaction it holds already. */
const ALREADY_KNOWN = 'already known';

/** An RPC node (--no-build) with --rollup.sequencerhttp, as op-geth's: its pending block is
 *  the sequencer's (flashblocks executed here), its transactions go to the sequencer.
 *
 *  eth_sendRawTransaction is forwarded, answered as the sequencer answers. The pending nonce
 *  is not: this node's pending state is the sequencer's last pre-confirmation, so it counts
 *  every transaction the sequencer has taken into its block; what it misses is a transaction
 *  sent in the last flashblock interval (200 ms on Base), which a client sending several at
 *  once counts itself (wallets' nonce managers) or avoids with the sync send, whose answer
 *  comes once this node shows the transaction. Reading it from the sequencer instead would
 *  put every wallet's nonce read on the sequencer (private, and sized for writes) and make
 *  it fail when the sequencer cannot be reached.
 *
 *  eth_sendRawTransactionSync is not forwarded (op-geth and op-rbuilder do not serve it): the
 *  transaction goes on as eth_sendRawTransaction and the answer is the receipt from this
 *  node's own pending block, the one its clients read next. */
export function sequencerMethods({ route, local, hub, chain }: ForwardOptions): Record<string, Method> {
  const send = local.get('eth_sendRawTransaction')!;
  return {
    eth_sendRawTransaction: {
      maxParams: send.maxParams,
      handler: (p) => route.send('eth_sendRawTransaction', [hexBytes(p[0], argPath(0), 'raw transaction')], send),
    },
    eth_sendRawTransactionSync: {
      maxParams: 2,
      handler: async (p) => {
        const raw = hexBytes(p[0], argPath(0), 'raw transaction');
        const timeout = syncTimeout(p[1]);
        const hash = chain.transactionHash(raw);
        const shown = (): string | null => {
          const receipt = chain.getPreconfirmedReceipt(hash);
          return receipt === 'null' ? null : receipt;
        };
        // Register, then look, in one tick: a receipt published before this request (the
        // client sent it elsewhere, or again) or while it is forwarded is the answer.
        const landed = hub.waitForTx(hash, timeout);
        const already = shown();
        if (already !== null) return already;
        const refusal = route.send('eth_sendRawTransaction', [raw], send).then(
          () => null,
          (e: unknown) => e,
        );
        const first = await Promise.race([landed.then((ok) => ({ ok })), refusal.then((error) => ({ error }))]);
        if ('ok' in first && first.ok) return chain.getPreconfirmedReceipt(hash);
        // The sequencer answered first, or the time ran out before it did: its answer decides.
        const error = 'error' in first ? first.error : await refusal;
        if (error !== null) {
          // "already known", "nonce too low": the transaction may be the one shown here.
          const receipt = shown();
          if (receipt !== null) return receipt;
          // The sequencer's pool holds it (sent elsewhere too, or again): as taken as when it
          // answers with the hash, so it is waited for the same way.
          if (!(error instanceof RpcError && error.message === ALREADY_KNOWN)) throw error;
        }
        if (await landed) return chain.getPreconfirmedReceipt(hash);
        throw syncTimedOut(timeout, hash);
      },
    },
  };
}

/** An OP Stack RPC node without a sequencer to send transactions to: its blocks come from
 *  op-node (--authrpc) or a sequencer's flashblocks and it builds nothing (--no-build), so its
 *  pool would keep them with no one to include them. Each is checked as the pool checks it
 *  (so a bad one gets the same answer), then refused, telling the operator what is missing.
 *  A plain --no-build node (a stored chain served as it is) keeps accepting them into its
 *  pool, as a geth that does not mine does: geth's conformance suite expects it, and a later
 *  run of that datadir as a builder includes them. */
export function unsentMethods(chain: Chain): Record<string, Method> {
  const refuse = (raw: unknown): never => {
    chain.checkRawTransaction(hexBytes(raw, argPath(0), 'raw transaction'));
    throw new RpcError(
      Code.Server,
      'this node does not build blocks (--no-build, its blocks come from op-node) and has no sequencer to send transactions to: start it with --rollup.sequencerhttp URL',
    );
  };
  return {
    eth_sendRawTransaction: { maxParams: 1, handler: (p) => refuse(p[0]) },
    eth_sendRawTransactionSync: {
      maxParams: 2,
      handler: (p) => {
        syncTimeout(p[1]);
        return refuse(p[0]);
      },
    },
  };
}

/** Where an RPC node sends transactions: the sequencer given by --rollup.sequencerhttp, or
 *  nowhere (refused). A replica's and a cluster node's writes go to their leader instead
 *  (forwardToLeader); a node that builds keeps them. */
export function routeUnbuilt(methods: Map<string, Method>, sequencerUrl: string | undefined, hub: SubscriptionHub, chain: Chain): void {
  const replaced =
    sequencerUrl === undefined
      ? unsentMethods(chain)
      : sequencerMethods({ route: staticRoute(sequencerUrl, 'sequencer'), local: new Map(methods), hub, chain });
  for (const [name, method] of Object.entries(replaced)) methods.set(name, method);
}
