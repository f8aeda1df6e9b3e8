// Compiles the Solidity sources in test/contracts with solc-js (once per test worker).

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import type { Abi, Hex } from 'viem';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));

export interface Compiled {
  abi: Abi;
  bytecode: Hex;
  runtime: Hex;
}

let cache: Record<string, Compiled> | undefined;

export function contract(name: 'Token' | 'Probe' | 'Relay' | 'Erc20' | 'Slots'): Compiled {
  cache ??= compileAll();
  const c = cache[name];
  if (!c) throw new Error(`no contract ${name}`);
  return c;
}

function compileAll(): Record<string, Compiled> {
  const solc = require('solc') as { compile(input: string): string };
  const files = ['Token.sol', 'Probe.sol', 'Relay.sol', 'Erc20.sol', 'Slots.sol'];
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(files.map((f) => [f, { content: readFileSync(join(here, '..', 'contracts', f), 'utf8') }])),
    settings: {
      evmVersion: 'prague',
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const out: Record<string, Compiled> = {};
  for (const file of Object.values(output.contracts)) {
    for (const [name, c] of Object.entries(file)) {
      out[name] = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}`, runtime: `0x${c.evm.deployedBytecode.object}` };
    }
  }
  return out;
}
