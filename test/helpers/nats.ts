// A real nats-server with JetStream on file storage, in its own temp dir, on loopback ports the
// server picks itself. stop / kill -9 / restart keep the ports and the store dir, so a test can
// check what survives a NATS restart.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureNatsServer } from '../../scripts/ensure-nats.mjs';

const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 15_000;
const MAX_LOG_CHARS = 1 << 20;

export class NatsStartError extends Error {
  override name = 'NatsStartError';
}

/** The binary vitest's global setup exported, or found/fetched now (benches run without vitest). */
export async function natsServerBinary(): Promise<string> {
  return process.env.NATS_SERVER_BIN ?? (await ensureNatsServer());
}

export interface NatsServerOptions {
  /** Extra command-line flags for nats-server. */
  args?: string[];
  /** Fixed client and monitoring ports (a cluster's members must know each other's). */
  ports?: { client: number; monitor: number };
  /** The server's name (`-n`): unique within a NATS cluster. */
  name?: string;
}

export type ExitResult = number | NodeJS.Signals;

export class NatsServer {
  /** Temp dir holding the store and the ports files; removed by cleanup(). */
  readonly dir: string;
  readonly storeDir: string;
  private child: ChildProcess | undefined;
  private exited: Promise<ExitResult> = Promise.resolve(0);
  private log = '';
  private clientPort = 0;
  private httpPort = 0;

  private constructor(
    private readonly bin: string,
    private readonly extraArgs: string[],
    private readonly name: string,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), 'preconf-nats-'));
    this.storeDir = join(this.dir, 'store');
  }

  static async start(options: NatsServerOptions = {}): Promise<NatsServer> {
    const server = new NatsServer(await natsServerBinary(), options.args ?? [], options.name ?? 'preconf-test');
    if (options.ports) {
      server.clientPort = options.ports.client;
      server.httpPort = options.ports.monitor;
    }
    try {
      await server.launch();
    } catch (e) {
      await server.cleanup();
      throw e;
    }
    return server;
  }

  get port(): number {
    return this.clientPort;
  }
  get monitorPort(): number {
    return this.httpPort;
  }
  get url(): string {
    return `nats://127.0.0.1:${this.clientPort}`;
  }
  get pid(): number | undefined {
    return this.child?.pid;
  }
  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }
  /** Everything the server logged, across restarts. */
  output(): string {
    return this.log;
  }

  /** Graceful stop (SIGTERM); resolves with the exit code. */
  async stop(): Promise<ExitResult> {
    return this.signal('SIGTERM');
  }

  /** kill -9: no shutdown, whatever the server had not written is gone. */
  async kill(): Promise<ExitResult> {
    return this.signal('SIGKILL');
  }

  /** Stops the server if it runs, then starts it on the same ports and store dir. */
  async restart(): Promise<void> {
    if (this.running) await this.stop();
    await this.launch();
  }

  /** Kills the server if it runs and removes its temp dir. */
  async cleanup(): Promise<void> {
    if (this.running) await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async signal(sig: NodeJS.Signals): Promise<ExitResult> {
    const child = this.child;
    if (!child || !this.running) return this.exited;
    child.kill(sig);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), STOP_TIMEOUT_MS)));
    const result = await Promise.race([this.exited, timeout]);
    clearTimeout(timer);
    if (result === 'timeout') {
      child.kill('SIGKILL');
      await this.exited;
      throw new Error(`nats-server did not exit within ${STOP_TIMEOUT_MS} ms of ${sig}:\n${this.tail()}`);
    }
    return result;
  }

  private async launch(): Promise<void> {
    // First start: port -1 lets the server pick free ports (no race); restarts reuse them.
    const ports = this.clientPort ? ['-p', String(this.clientPort), '-m', String(this.httpPort)] : ['-p', '-1', '-m', '-1'];
    const args = ['-js', '-sd', this.storeDir, '-a', '127.0.0.1', ...ports, '--ports_file_dir', this.dir, '-n', this.name, ...this.extraArgs];
    const child = spawn(this.bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
    const append = (d: Buffer) => {
      this.log += d.toString();
      if (this.log.length > MAX_LOG_CHARS) this.log = this.log.slice(-MAX_LOG_CHARS / 2);
    };
    child.stdout?.on('data', append);
    child.stderr?.on('data', append);
    await this.waitReady(child);
  }

  /** Ready = the ports file of this process exists, JetStream reports healthy and a client gets PONG. */
  private async waitReady(child: ChildProcess): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    const portsFile = join(this.dir, `nats-server_${child.pid}.ports`);
    let lastError = 'not started';
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new NatsStartError(`nats-server exited (${child.exitCode ?? child.signalCode}) while starting:\n${this.tail()}`);
      }
      if (Date.now() > deadline) {
        throw new NatsStartError(`nats-server not ready after ${START_TIMEOUT_MS} ms (${lastError}):\n${this.tail()}`);
      }
      try {
        if (!existsSync(portsFile)) throw new Error('no ports file yet');
        if (!this.clientPort) this.readPorts(portsFile);
        await this.healthy();
        await pong(this.clientPort);
        return;
      } catch (e) {
        lastError = (e as Error).message;
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  private readPorts(file: string): void {
    const ports = JSON.parse(readFileSync(file, 'utf8')) as { nats?: string[]; monitoring?: string[] };
    const client = Number(new URL(ports.nats?.[0] ?? '').port);
    const http = Number(new URL(ports.monitoring?.[0] ?? '').port);
    if (!client || !http) throw new Error(`incomplete ports file ${file}`);
    this.clientPort = client;
    this.httpPort = http;
  }

  private async healthy(): Promise<void> {
    // /healthz answers 200 only once JetStream is enabled and its streams are recovered.
    const res = await fetch(`http://127.0.0.1:${this.httpPort}/healthz`, { signal: AbortSignal.timeout(2_000) });
    if (res.status !== 200) throw new Error(`healthz ${res.status}: ${await res.text()}`);
  }

  private tail(): string {
    return this.log.split('\n').slice(-30).join('\n');
  }
}

/** Starts a nats-server with JetStream (file storage) in a fresh temp dir. */
export function startNats(options?: NatsServerOptions): Promise<NatsServer> {
  return NatsServer.start(options);
}

/** A raw protocol round trip: INFO from the server, then CONNECT + PING answered by PONG. */
function pong(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port });
    let buf = '';
    let sentPing = false;
    const done = (err?: Error) => {
      sock.destroy();
      if (err) reject(err);
      else resolve();
    };
    sock.setTimeout(2_000, () => done(new Error('no PONG within 2 s')));
    sock.on('error', done);
    sock.on('data', (d) => {
      buf += d.toString();
      if (!sentPing && buf.startsWith('INFO ') && buf.includes('\r\n')) {
        if (!buf.includes('"jetstream":true')) return done(new Error('server INFO does not announce JetStream'));
        sock.write('CONNECT {"verbose":false,"pedantic":false}\r\nPING\r\n');
        sentPing = true;
      }
      if (buf.includes('PONG\r\n')) done();
    });
  });
}
