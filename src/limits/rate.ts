// Per-client limits for public endpoints (--rate-limit, --rate-limit-heavy): requests per
// second as a token bucket, and heavy requests in flight. Every event loop (--threads) sees
// the same figures: they live in a SharedArrayBuffer the main thread makes and hands to the
// workers, a fixed table of buckets keyed by a hash of the client's address.
//
// A slot is reused when its bucket has refilled and nothing is in flight (a full bucket is
// the same as a new one); a client that finds every slot of its probe in use shares the
// first with another client, so the table never grows and never forgets a busy client.

export interface RateLimits {
  /** Requests per second per client (a batch counts each of its requests); 0: off. */
  rps: number;
  /** Heavy requests (eth_call, estimates, simulations, traces, log queries) in flight per client; 0: off. */
  heavy: number;
}

const SLOTS = 8192;
const PROBE = 8;
// Int32 fields per slot: key, lock, heavy in flight. Float64 fields: tokens, last refill (ms).
const I_KEY = 0;
const I_LOCK = 1;
const I_HEAVY = 2;
const INTS = 4;

/** Memory shared by every event loop's limiter. */
export function rateTable(): SharedArrayBuffer {
  return new SharedArrayBuffer(SLOTS * (INTS * 4 + 16));
}

/** FNV-1a of the address; never 0 (an empty slot). */
export function clientKey(address: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < address.length; i++) h = Math.imul(h ^ address.charCodeAt(i), 0x01000193);
  return h >>> 0 || 1;
}

/** clientKey of an address given as its ASCII bytes (as uWebSockets.js hands out the peer's):
 *  the same key as for the decoded text, without decoding it. */
export function clientKeyOfAscii(address: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < address.length; i++) h = Math.imul(h ^ address[i]!, 0x01000193);
  return h >>> 0 || 1;
}

export class RateLimiter {
  private readonly ints: Int32Array;
  private readonly floats: Float64Array;
  /** A full bucket holds one second's worth. */
  private readonly burst: number;

  constructor(
    readonly limits: RateLimits,
    table: SharedArrayBuffer,
    private readonly now: () => number = () => performance.timeOrigin + performance.now(),
  ) {
    this.ints = new Int32Array(table, 0, SLOTS * INTS);
    this.floats = new Float64Array(table, SLOTS * INTS * 4, SLOTS * 2);
    this.burst = Math.max(1, limits.rps);
  }

  get enabled(): boolean {
    return this.limits.rps > 0 || this.limits.heavy > 0;
  }

  /**
   * Takes `cost` requests from the client's bucket. Returns 0 when they may go ahead, or
   * the whole seconds to wait (Retry-After). A bucket with anything left admits a batch
   * larger than it holds and goes into debt, so no batch is refused forever.
   */
  take(key: number, cost: number): number {
    const rps = this.limits.rps;
    if (rps <= 0) return 0;
    const slot = this.slot(key);
    this.lock(slot);
    try {
      const now = this.now();
      const f = slot * 2;
      const tokens = Math.min(this.burst, this.floats[f]! + ((now - this.floats[f + 1]!) / 1000) * rps);
      this.floats[f + 1] = now;
      if (tokens <= 0) {
        this.floats[f] = tokens;
        return Math.max(1, Math.ceil((1 - tokens) / rps));
      }
      this.floats[f] = tokens - cost;
      return 0;
    } finally {
      Atomics.store(this.ints, slot * INTS + I_LOCK, 0);
    }
  }

  /** A heavy request starts: false when the client already has its limit in flight. */
  acquireHeavy(key: number): boolean {
    const limit = this.limits.heavy;
    if (limit <= 0) return true;
    const i = this.slot(key) * INTS + I_HEAVY;
    if (Atomics.add(this.ints, i, 1) < limit) return true;
    Atomics.sub(this.ints, i, 1);
    return false;
  }

  releaseHeavy(key: number): void {
    if (this.limits.heavy <= 0) return;
    Atomics.sub(this.ints, this.slot(key) * INTS + I_HEAVY, 1);
  }

  /** The client's slot: its own, a free or idle one it claims, or (table busy) a shared one. */
  private slot(key: number): number {
    const first = key % SLOTS;
    const now = this.now();
    for (let p = 0; p < PROBE; p++) {
      const s = (first + p) % SLOTS;
      const k = Atomics.load(this.ints, s * INTS + I_KEY);
      if (k === (key | 0)) return s;
      if (k === 0 || this.idle(s, now)) {
        this.lock(s);
        const again = Atomics.load(this.ints, s * INTS + I_KEY);
        if (again === (key | 0)) {
          Atomics.store(this.ints, s * INTS + I_LOCK, 0);
          return s;
        }
        if (again === 0 || this.idle(s, now)) {
          Atomics.store(this.ints, s * INTS + I_KEY, key | 0);
          this.floats[s * 2] = this.burst;
          this.floats[s * 2 + 1] = now;
          Atomics.store(this.ints, s * INTS + I_LOCK, 0);
          return s;
        }
        Atomics.store(this.ints, s * INTS + I_LOCK, 0);
      }
    }
    return first;
  }

  /** Refilled and with nothing in flight: as good as empty. */
  private idle(s: number, now: number): boolean {
    if (Atomics.load(this.ints, s * INTS + I_HEAVY) !== 0) return false;
    const rps = this.limits.rps;
    if (rps <= 0) return true;
    return this.floats[s * 2]! + ((now - this.floats[s * 2 + 1]!) / 1000) * rps >= this.burst;
  }

  private lock(slot: number): void {
    const i = slot * INTS + I_LOCK;
    // Held for a few arithmetic operations; another thread spins at most that long.
    while (Atomics.compareExchange(this.ints, i, 0, 1) !== 0);
  }
}
