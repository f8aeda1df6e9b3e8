// The node's one logger (pino): every line the node writes, from TypeScript and, through the
// addon's log sink, from Rust (the builder, the store, replication). JSON lines for a log
// pipeline, or a short human form on a terminal (`--log-format`); `--log-level` filters.

import { writeSync } from 'node:fs';
import { pino, type Logger } from 'pino';

export type LogFormat = 'json' | 'pretty';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

export interface LogConfig {
  format: LogFormat;
  level: LogLevel;
  /** Requests slower than this are logged at warn (method, duration, size). */
  slowMs: number;
}

/** Pretty on a terminal, JSON otherwise (a pipe, a file, a log collector). */
export function defaultLogConfig(): LogConfig {
  return { format: process.stdout.isTTY ? 'pretty' : 'json', level: 'info', slowMs: 1000 };
}

/** One JSON line as a person reads it: time, level, component, message, then the fields. */
export function prettyLine(json: string): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const { time, level, msg, component, ...rest } = o;
  const at = typeof time === 'string' ? time.slice(11, 23) : '';
  const name = String(level).toUpperCase();
  const fields = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  const where = component === undefined ? '' : `${String(component)}: `;
  return `${at} ${name.padEnd(5)} ${where}${String(msg ?? '')}${fields === '' ? '' : `  ${fields}`}\n`;
}

/** A full non-blocking stdout is waited for this long per line, then lines are dropped for
 *  `DROP_MS`: a log line must never throw into, or stall, the request that wrote it. */
const FULL_WAIT_MS = 5;
const DROP_MS = 100;
let droppingUntil = 0;
const pause = new Int32Array(new SharedArrayBuffer(4));

/** Writes synchronously, so that nothing is lost when the process exits right after. stdout
 *  can be a non-blocking pipe its reader drains slowly: EAGAIN and partial writes are waited
 *  out briefly; a line that still does not fit, or a closed stdout, drops the line. */
function writeLine(line: string): void {
  if (droppingUntil !== 0 && Date.now() < droppingUntil) return;
  let rest = Buffer.from(line);
  const giveUp = Date.now() + FULL_WAIT_MS;
  while (rest.length > 0) {
    try {
      rest = rest.subarray(writeSync(1, rest));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN' || Date.now() >= giveUp) {
        droppingUntil = Date.now() + DROP_MS;
        return;
      }
      Atomics.wait(pause, 0, 0, 1);
    }
  }
  droppingUntil = 0;
}

const stdoutJson = { write: (line: string): void => writeLine(line) };
const stdoutPretty = { write: (line: string): void => writeLine(prettyLine(line)) };

let current: Logger | undefined;

/** Creates the process's logger (every event loop of the process creates its own with the same config). */
export function createLogger(config: LogConfig): Logger {
  current = pino(
    {
      level: config.level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    config.format === 'pretty' ? stdoutPretty : stdoutJson,
  );
  return current;
}

/** The process's logger; before `createLogger`, one with the defaults. */
export function logger(): Logger {
  return (current ??= createLogger(defaultLogConfig()));
}

/** A child logger for one part of the node (`component` field). */
export const componentLogger = (component: string): Logger => logger().child({ component });
