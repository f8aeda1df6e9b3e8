// Foundry's cast and forge from npm (the @foundry-rs packages), run as a user runs them.
// forge compiles with test/helpers/solc-cli.cjs (solc-js behind solc's command line): no
// native solc can be downloaded offline.

import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Abi, Hex } from 'viem';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));

export const SOLC_CLI = join(here, 'solc-cli.cjs');

const binary = (tool: 'cast' | 'forge'): string => join(dirname(require.resolve(`@foundry-rs/${tool}-linux-amd64/package.json`)), 'bin', tool);

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, timeout: 60_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

export const cast = (args: string[]): Promise<Run> => run(binary('cast'), args);

/** A copy of test/fixtures/forge-script in a temporary directory (forge writes out/, cache/, broadcast/). */
export class ForgeProject {
  readonly dir = mkdtempSync(join(tmpdir(), 'preconf-forge-'));

  constructor() {
    cpSync(join(here, '..', 'fixtures', 'forge-script'), this.dir, { recursive: true });
  }

  /** `forge <command> ...args` with solc-js as the compiler (placed before variadic flags such as --constructor-args). */
  forge(args: string[], env: Record<string, string> = {}): Promise<Run> {
    const [command, ...rest] = args;
    return run(binary('forge'), [command!, '--use', SOLC_CLI, '--offline', ...rest], { cwd: this.dir, env });
  }

  /** The compiled Counter (after `forge build`). */
  counter(): { abi: Abi; bytecode: Hex } {
    const a = JSON.parse(readFileSync(join(this.dir, 'out', 'Counter.sol', 'Counter.json'), 'utf8')) as {
      abi: Abi;
      bytecode: { object: Hex };
    };
    return { abi: a.abi, bytecode: a.bytecode.object };
  }

  /** What `forge script --broadcast` recorded for its last run. */
  lastBroadcast(script: string, chainId: number): { transactions: unknown[]; receipts: { status: string }[] } {
    return JSON.parse(readFileSync(join(this.dir, 'broadcast', script, String(chainId), 'run-latest.json'), 'utf8'));
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Fails with the tool's output, so a failing step says what the tool said. */
export function ok(r: Run, what: string): string {
  if (r.code !== 0) throw new Error(`${what} exited ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
  return r.stdout;
}
