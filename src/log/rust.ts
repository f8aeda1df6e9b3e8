// The addon's log lines (crates/chain's `log`: the builder, the store, the pool journal,
// replication and the cluster) into the node's pino logger, with their fields.

import type { Logger } from 'pino';
import { setLogSink } from '../native.js';
import type { LogLevel } from './index.js';

export function forwardRustLogs(log: Logger, minLevel: LogLevel): void {
  setLogSink(minLevel, (level, component, message, fieldsJson) => {
    let fields: Record<string, unknown> = {};
    try {
      fields = JSON.parse(fieldsJson) as Record<string, unknown>;
    } catch {
      fields = { fields: fieldsJson };
    }
    log[level]({ component, ...fields }, message);
  });
}
