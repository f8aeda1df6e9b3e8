// `preconf-node --help` as a person reads it: every flag's text starts in one column, at
// least two spaces after the longest flag, and each flag names its default once.

import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseArgs, usage } from '../../src/cli/index.js';

describe('--help', () => {
  const flagLines = usage()
    .split('\n')
    .filter((l) => l.startsWith('  --'));

  it('lists every flag with its text in one column, apart from the flag', () => {
    expect(flagLines.length).toBeGreaterThan(50);
    const columns = new Set<number>();
    for (const line of flagLines) {
      // The flag (dotted as op-rbuilder names its flashblocks flags), an optional VALUE in capitals (KEY:VALUE as anvil names it), then at least two spaces before the text.
      const m = /^( {2}--[a-z0-9.-]+(?: [A-Z_[\],.:…]+)?) {2,}(\S)/.exec(line);
      expect(m, line).not.toBeNull();
      columns.add((m?.[0].length ?? 0) - 1);
    }
    expect([...columns]).toHaveLength(1);
    expect(usage()).toContain('--simulate-max-calls-per-block N  ');
  });

  it('names each default once', () => {
    for (const line of flagLines) expect(line.match(/\(default/g)?.length ?? 0, line).toBeLessThanOrEqual(1);
    expect(flagLines.find((l) => l.includes('--trace-max-timeout-ms'))).toMatch(/gets 5 s\) \(default 60000\)$/);
  });
});

describe('--rollup-config', () => {
  it('gives the chain config for a genesis whose config is null', () => {
    const cfg = parseArgs(['--genesis', 'package.json', '--rollup-config', 'test/fixtures/op/chain-configs/base-mainnet.toml']);
    expect(cfg).not.toBe('help');
    if (cfg === 'help') return;
    expect(cfg.chain.rollupConfig).toBe(resolve('test/fixtures/op/chain-configs/base-mainnet.toml'));
  });
});

describe('--authrpc.*', () => {
  it("takes geth's and reth's names; any one of them turns the Engine API on with the others' defaults", () => {
    const cfg = parseArgs(['--authrpc.jwtsecret', 'secrets/jwt.hex']);
    if (cfg === 'help') throw new Error('help');
    expect(cfg.engine).toEqual({ addr: '127.0.0.1', port: 8551, jwtSecret: resolve('secrets/jwt.hex') });
    const other = parseArgs(['--authrpc.addr', '0.0.0.0', '--authrpc.port', '9551']);
    if (other === 'help') throw new Error('help');
    expect(other.engine).toEqual({ addr: '0.0.0.0', port: 9551 });
    expect(() => parseArgs(['--authrpc.port', '70000'])).toThrow(/--authrpc.port must be a port number/);
    const off = parseArgs([]);
    if (off === 'help') throw new Error('help');
    expect(off.engine).toBeUndefined();
  });
});
