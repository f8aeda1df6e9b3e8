// How long NATS has been unreachable, and what /health says about it: degraded (HTTP 503,
// with the reason) once the outage lasts longer than --nats-timeout-ms, healthy again as
// soon as NATS answers.

import { errorText } from './stream.js';

export type Log = (message: string) => void;

export class Outage {
  private since: number | null = null;
  private error = '';
  private degraded = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    /** What fails, as the start of the health reason ("replication: cannot publish to …"). */
    private readonly what: string,
    private readonly timeoutMs: number,
    private readonly setHealth: (reason: string | null) => void,
    private readonly log: Log,
    /** More to say while degraded (queued and dropped messages). */
    private readonly detail: () => string = () => '',
  ) {
    this.timer = setInterval(() => this.check(), Math.min(250, timeoutMs));
    this.timer.unref();
  }

  /** Something failed; the outage starts now unless it already runs. */
  fail(e: unknown): void {
    this.error = errorText(e);
    if (this.since === null) {
      this.since = Date.now();
      this.log(`${this.what}: ${this.error}`);
    }
  }

  /** Not connected yet: counts as an outage from now on, without a log line. */
  starting(): void {
    this.error = 'not connected yet';
    this.since ??= Date.now();
  }

  /** NATS answered: the outage (if any) is over. */
  ok(): void {
    if (this.since === null) return;
    if (this.error !== 'not connected yet' || this.degraded) {
      this.log(`${this.what}: recovered after ${((Date.now() - this.since) / 1000).toFixed(1)} s`);
    }
    this.since = null;
    if (this.degraded) {
      this.degraded = false;
      this.setHealth(null);
    }
  }

  get failing(): boolean {
    return this.since !== null;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private check(): void {
    if (this.since === null) return;
    const ms = Date.now() - this.since;
    if (ms < this.timeoutMs) return;
    this.degraded = true;
    this.setHealth(`${this.what} for ${(ms / 1000).toFixed(1)} s (${this.error})${this.detail()}`);
  }
}
