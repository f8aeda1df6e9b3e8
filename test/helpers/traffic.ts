// The one traffic generator of the tests: signed transfers from several dev accounts at a
// steady rate, each sent to a node picked at random among those given (one node: all to
// it). Every hash a node answered is remembered (accepted, in order in `hashes`); every
// error answer is counted by its message (an election makes a few; none may be silent).
// A transaction that was not taken is sent again (for a given account and nonce it is
// always the same transaction, so it never races another) unless the chain says its nonce
// is used; with `afterError: 'reask'` the nonce is asked again after any error (a static
// leader that restarted may have lost what it had not sealed).

import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DEV_KEYS } from './node.js';
import { signTransfer } from './transfer.js';

/** A client gives up on a node after this long (a frozen node answers nothing). */
export const CALL_TIMEOUT_MS = 8_000;

/** A JSON-RPC call that reports an error answer or a failed connection as text. */
export async function tryCall(url: string, method: string, params: unknown[]): Promise<{ result?: any; error?: string }> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    const json = (await res.json()) as { result?: unknown; error?: { code: number; message: string } };
    if (json.error) return { error: `${json.error.code}: ${json.error.message}` };
    return { result: json.result };
  } catch (e) {
    return { error: `unreachable: ${(e as Error).message}` };
  }
}

/** Where account `index`'s transfers go: an address of its own, so none collide. */
export const sinkOf = (index: number): Hex => `0x${'ee'.repeat(19)}${index.toString(16).padStart(2, '0')}`;

export class Senders {
  /** Hashes a node answered eth_sendRawTransaction with. */
  readonly accepted = new Set<Hex>();
  /** The same, in the order they were accepted. */
  readonly hashes: Hex[] = [];
  /** Error answers, by message with numbers masked. */
  readonly errors = new Map<string, number>();
  private running = true;
  private readonly done: Promise<void>;

  constructor(
    private readonly nodes: () => string[],
    accounts: number[],
    private readonly intervalMs: number,
    private readonly afterError: 'resend' | 'reask' = 'resend',
  ) {
    this.done = Promise.all(accounts.map((a) => this.run(a))).then(() => undefined);
  }

  /** Transactions accepted so far. */
  get sent(): number {
    return this.hashes.length;
  }

  /** Error answers so far (refusals and unreachable nodes). */
  get failed(): number {
    let n = 0;
    for (const count of this.errors.values()) n += count;
    return n;
  }

  private pick(): string | undefined {
    const urls = this.nodes();
    return urls[Math.floor(Math.random() * urls.length)];
  }

  private note(error: string): void {
    const key = error.replace(/\d+/g, 'N').slice(0, 120);
    this.errors.set(key, (this.errors.get(key) ?? 0) + 1);
  }

  private async run(index: number): Promise<void> {
    const account = privateKeyToAccount(DEV_KEYS[index]!);
    let nonce: number | null = null;
    let raw: Hex | null = null;
    while (this.running) {
      const url = this.pick();
      if (url === undefined) {
        await new Promise((r) => setTimeout(r, this.intervalMs));
        continue;
      }
      if (nonce === null) {
        const n = await tryCall(url, 'eth_getTransactionCount', [account.address, 'pending']);
        if (n.error !== undefined) {
          this.note(n.error);
          await new Promise((r) => setTimeout(r, this.intervalMs));
          continue;
        }
        nonce = Number(n.result);
      }
      raw ??= await signTransfer(account, { to: sinkOf(index), nonce });
      const sent = await tryCall(url, 'eth_sendRawTransaction', [raw]);
      if (sent.result !== undefined) {
        this.accepted.add(sent.result as Hex);
        this.hashes.push(sent.result as Hex);
        nonce++;
        raw = null;
      } else {
        this.note(sent.error!);
        if (this.afterError === 'reask' || /nonce too low|already known/.test(sent.error!)) [nonce, raw] = [null, null];
      }
      await new Promise((r) => setTimeout(r, this.intervalMs));
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}
