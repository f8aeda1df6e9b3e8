// Vitest global setup: every run gets a real nats-server (replication is tested against one),
// fetched on first use. A machine that cannot get one fails the run here instead of skipping.

import { ensureNatsServer } from '../../scripts/ensure-nats.mjs';

export default async function setup(): Promise<void> {
  // Throws NatsServerUnavailable with every attempt and the fix when nothing works.
  const bin = await ensureNatsServer({ log: (m) => console.log(`nats-server: ${m}`) });
  // Test workers are forked after this and inherit the environment.
  process.env.NATS_SERVER_BIN = bin;
}
