// How a batch's heavy requests run: a few at a time, within a time budget for the whole
// batch, and (with --rate-limit-heavy) within the client's allowance of heavy requests in
// flight. A batch of 1,000 eth_calls then holds a few threads of the calls pool at a time
// instead of queueing 1,000 jobs in front of every other client.

import { Code, RpcError } from '../errors/index.js';

export interface BatchBudget {
  /** Heavy requests of one batch running at once. */
  concurrency: number;
  /** Wall-clock time a batch's heavy requests may take in all, from its arrival. */
  budgetMs: number;
}

/** The client's allowance of heavy requests in flight (rate limits), if any. */
export interface HeavySlots {
  acquire(): boolean;
  release(): void;
  /** The refusal when the client holds none and can get none. */
  refusal(): RpcError;
}

export class BatchGate {
  private running = 0;
  private readonly waiting: (() => boolean)[] = [];
  private readonly deadline: number;

  constructor(
    private readonly budget: BatchBudget,
    private readonly slots?: HeavySlots,
  ) {
    this.deadline = performance.now() + budget.budgetMs;
  }

  /** Runs `start` in its turn; `refuse` answers instead when the budget is spent. */
  run(start: () => string | Promise<string>, refuse: (why: RpcError) => string): Promise<string> {
    return new Promise((resolve) => {
      // Returns false when it must wait for one of the batch's own requests to finish.
      const go = (): boolean => {
        if (performance.now() > this.deadline) {
          resolve(
            refuse(
              new RpcError(Code.LimitExceeded, `batch time budget of ${this.budget.budgetMs} ms used up before this request started; send it again on its own`),
            ),
          );
          return true;
        }
        if (this.slots !== undefined && !this.slots.acquire()) {
          if (this.running > 0) return false;
          resolve(refuse(this.slots.refusal()));
          return true;
        }
        this.running++;
        const settle = (out: string): void => {
          this.running--;
          this.slots?.release();
          resolve(out);
          this.next();
        };
        let out: string | Promise<string>;
        try {
          out = start();
        } catch (e) {
          settle(refuse(e instanceof RpcError ? e : new RpcError(Code.Internal, 'internal error')));
          return true;
        }
        if (typeof out === 'string') settle(out);
        else out.then(settle, () => settle(refuse(new RpcError(Code.Internal, 'internal error'))));
        return true;
      };
      if (this.running < this.budget.concurrency && this.waiting.length === 0) {
        if (!go()) this.waiting.unshift(go);
      } else this.waiting.push(go);
    });
  }

  private next(): void {
    while (this.running < this.budget.concurrency && this.waiting.length > 0) {
      const go = this.waiting.shift()!;
      if (!go()) {
        this.waiting.unshift(go);
        return;
      }
    }
  }
}
