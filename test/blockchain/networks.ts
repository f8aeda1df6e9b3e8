// A fixture's `network` (a fork, or a transition such as `ShanghaiToCancunAtTime15k`) as the
// `config` of a geth-style genesis.json: the forks up to the named one at block or time 0,
// a transition's later forks at its block, time or total difficulty.

/** A fork name the node cannot run, with the reason the runner reports. */
export class UnsupportedNetwork extends Error {}

type Activation = { key: string; by: 'block' | 'time' | 'ttd' };

const block = (key: string): Activation => ({ key, by: 'block' });
const time = (key: string): Activation => ({ key, by: 'time' });

/** Each fork with the config keys it adds, oldest first (geth's tests/init.go order). */
const FORKS: [string, Activation[]][] = [
  ['Frontier', []],
  ['Homestead', [block('homesteadBlock')]],
  ['EIP150', [block('eip150Block')]],
  ['EIP158', [block('eip155Block'), block('eip158Block')]],
  ['Byzantium', [block('byzantiumBlock')]],
  ['ConstantinopleFix', [block('constantinopleBlock'), block('petersburgBlock')]],
  ['Istanbul', [block('istanbulBlock')]],
  ['MuirGlacier', [block('muirGlacierBlock')]],
  ['Berlin', [block('berlinBlock')]],
  ['London', [block('londonBlock')]],
  ['ArrowGlacier', [block('arrowGlacierBlock')]],
  ['GrayGlacier', [block('grayGlacierBlock')]],
  ['Paris', [{ key: 'terminalTotalDifficulty', by: 'ttd' }]],
  ['Shanghai', [time('shanghaiTime')]],
  ['Cancun', [time('cancunTime')]],
  ['Prague', [time('pragueTime')]],
  ['Osaka', [time('osakaTime')]],
  ['BPO1', [time('bpo1Time')]],
  ['BPO2', [time('bpo2Time')]],
  ['BPO3', [time('bpo3Time')]],
  ['BPO4', [time('bpo4Time')]],
  ['BPO5', [time('bpo5Time')]],
];

const ALIASES: Record<string, string> = { Petersburg: 'ConstantinopleFix', Merge: 'Paris' };

const UNSUPPORTED: Record<string, string> = {
  // revm has no Constantinople: it runs Petersburg's rules, without EIP-1283's SSTORE metering.
  Constantinople: 'Constantinople (EIP-1283) is not in revm: only ConstantinopleFix/Petersburg',
  Amsterdam: 'Amsterdam is not implemented by the importer',
};

/** The EIP-6110 deposit contract: Prague's requests read its logs. */
const DEPOSIT_CONTRACT = '0x00000000219ab540356cbb839cbe05303d7705fa';

function forkIndex(name: string): number {
  const canonical = ALIASES[name] ?? name;
  if (UNSUPPORTED[canonical]) throw new UnsupportedNetwork(UNSUPPORTED[canonical]);
  const i = FORKS.findIndex(([n]) => n === canonical);
  if (i < 0) throw new UnsupportedNetwork(`unknown network ${name}`);
  return i;
}

/** "5" → 5, "15k" → 15000, "DiffC0000" → 0xC0000. */
function transitionPoint(text: string): { at: number | bigint; by: 'block' | 'time' | 'ttd' } {
  const diff = /^Diff([0-9A-Fa-f]+)$/.exec(text);
  if (diff) return { at: BigInt(`0x${diff[1]}`), by: 'ttd' };
  const t = /^Time(\d+)(k?)$/.exec(text);
  if (t) return { at: Number(t[1]) * (t[2] ? 1000 : 1), by: 'time' };
  const b = /^(\d+)(k?)$/.exec(text);
  if (b) return { at: Number(b[1]) * (b[2] ? 1000 : 1), by: 'block' };
  throw new UnsupportedNetwork(`cannot read the transition point "${text}"`);
}

export interface NetworkConfig {
  /** The config keys (geth's genesis.json names) the network sets. */
  forks: Record<string, number | string | boolean>;
  /** The newest fork reached, for the blob schedule. */
  last: string;
}

/** The fork schedule of a fixture's `network`. */
export function networkConfig(network: string): NetworkConfig {
  const forks: Record<string, number | string | boolean> = {};
  const set = (a: Activation, at: number | bigint): void => {
    if (a.by === 'ttd') {
      forks.terminalTotalDifficulty = typeof at === 'bigint' ? `0x${at.toString(16)}` : 0;
      forks.terminalTotalDifficultyPassed = at === 0;
    } else forks[a.key] = Number(at);
  };
  const upTo = (last: number, at: number | bigint, from = 0): void => {
    for (let i = from; i <= last; i++) for (const a of FORKS[i]![1]) set(a, at);
  };
  const transition = /^(\w+?)To(\w+?)At(\w+)$/.exec(network);
  if (!transition) {
    const i = forkIndex(network);
    upTo(i, 0);
    return { forks, last: FORKS[i]![0] };
  }
  const [, from, to, point] = transition as unknown as [string, string, string, string];
  if (to === 'Dao') {
    // The DAO fork is a one-off at a block, not a rule set: the older fork plus the block.
    upTo(forkIndex(from), 0);
    forks.daoForkBlock = Number(transitionPoint(point).at);
    forks.daoForkSupport = true;
    return { forks, last: FORKS[forkIndex(from)]![0] };
  }
  const a = forkIndex(from);
  const b = forkIndex(to);
  const { at, by } = transitionPoint(point);
  upTo(a, 0);
  for (let i = a + 1; i <= b; i++) {
    for (const act of FORKS[i]![1]) {
      // Block-numbered forks between a time-based pair (none exist) would stay at 0.
      set(act, act.by === by || act.by === 'ttd' ? at : 0);
    }
  }
  return { forks, last: FORKS[b]![0] };
}

/** Blob parameters as a fixture's `config.blobSchedule` writes them (hex strings). */
export type FixtureBlobSchedule = Record<string, { target: string; max: string; baseFeeUpdateFraction: string }>;

/** Mainnet's parameters, for legacy fixtures that carry no schedule. */
const DEFAULT_BLOBS: Record<string, { target: number; max: number; baseFeeUpdateFraction: number }> = {
  cancun: { target: 3, max: 6, baseFeeUpdateFraction: 3_338_477 },
  prague: { target: 6, max: 9, baseFeeUpdateFraction: 5_007_716 },
  osaka: { target: 6, max: 9, baseFeeUpdateFraction: 5_007_716 },
};

/** The genesis.json `config` for a fixture: fork schedule, chain id, blob schedule, deposit contract. */
export function genesisConfig(network: string, chainId: number, schedule?: FixtureBlobSchedule): Record<string, unknown> {
  const { forks } = networkConfig(network);
  const blobSchedule: Record<string, unknown> = {};
  if (schedule) {
    for (const [name, p] of Object.entries(schedule)) {
      blobSchedule[name.toLowerCase()] = { target: Number(p.target), max: Number(p.max), baseFeeUpdateFraction: Number(p.baseFeeUpdateFraction) };
    }
  } else {
    for (const [name, p] of Object.entries(DEFAULT_BLOBS)) if (`${name}Time` in forks) blobSchedule[name] = p;
  }
  return {
    chainId,
    ...forks,
    ...(Object.keys(blobSchedule).length > 0 ? { blobSchedule } : {}),
    ...('pragueTime' in forks ? { depositContractAddress: DEPOSIT_CONTRACT } : {}),
  };
}
