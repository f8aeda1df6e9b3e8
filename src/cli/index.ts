// Command-line flags -> configuration. Every flag has a default that runs the dev chain.

import { defaultChainOptions } from '../native.js';
import { type Config, defaultConfig } from './config.js';
import { FLAGS } from './flags.js';

export { defaultConfig, type Config, type ReplicationConfig, type ServerConfig } from './config.js';

export function usage(): string {
  const chain = defaultChainOptions();
  const { server, replication, log } = defaultConfig();
  const names = FLAGS.map((f) => `  --${f.name}${f.value ? ` ${f.value}` : ''}`);
  // The help column starts two spaces after the longest flag, so no flag runs into its text.
  const column = Math.max(...names.map((n) => n.length)) + 2;
  const lines = FLAGS.map((f, i) => {
    const d =
      f.chainDefault !== undefined
        ? chain[f.chainDefault]
        : f.serverDefault !== undefined
          ? server[f.serverDefault]
          : f.replicationDefault !== undefined
            ? replication[f.replicationDefault]
            : f.logDefault !== undefined
              ? log?.[f.logDefault]
              : undefined;
    return (names[i] ?? '').padEnd(column) + f.help + (d === undefined ? '' : ` (default ${String(d)})`);
  });
  return `Usage: preconf-node [flags]\n       preconf-node import --genesis FILE [--datadir DIR] BLOCKS.rlp   (see preconf-node import --help)\n       preconf-node export [--datadir DIR] [--from A] [--to B] BLOCKS.rlp   (see preconf-node export --help)\n       preconf-node verify [--datadir DIR]\n\n${lines.join('\n')}\n${'  --help'.padEnd(column)}this text\n`;
}

/** Parses argv (without node and script). Throws with a message naming the bad flag. */
export function parseArgs(argv: string[]): Config | 'help' {
  const cfg = defaultConfig();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return 'help';
    if (!arg.startsWith('--')) throw new Error(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const flag = FLAGS.find((f) => f.name === name);
    if (flag === undefined) throw new Error(`unknown flag --${name} (see --help)`);
    let value = '';
    if (flag.value !== undefined) {
      if (eq !== -1) value = arg.slice(eq + 1);
      else {
        const next = argv[++i];
        if (next === undefined) throw new Error(`--${name} needs a value (${flag.value})`);
        value = next;
      }
    } else if (eq !== -1) throw new Error(`--${name} takes no value`);
    flag.apply(cfg, value);
  }
  const r = cfg.replication;
  if (r.publish !== undefined && r.follow !== undefined) throw new Error('--publish and --follow exclude each other: a node leads or follows');
  if (r.follow !== undefined && r.leader === undefined) throw new Error('--follow needs --leader URL: a replica forwards transactions to the leader');
  if (r.leader !== undefined && r.follow === undefined) throw new Error('--leader only applies to a replica (--follow)');
  if (r.cluster !== undefined && (r.publish !== undefined || r.follow !== undefined)) {
    throw new Error('--cluster excludes --publish and --follow: in a cluster the lease decides who leads');
  }
  if (r.cluster === undefined && (r.nodeId !== undefined || r.advertise !== undefined))
    throw new Error('--node-id and --advertise apply to a cluster node (--cluster)');
  if (cfg.sequencerHttp !== undefined) {
    // A replica and a cluster's node already send writes to their leader; a builder keeps them.
    if (r.publish !== undefined || r.follow !== undefined || r.cluster !== undefined)
      throw new Error('--rollup.sequencerhttp excludes --publish, --follow and --cluster: a replicated node sends its transactions to the leader, or is it');
    if (cfg.chain.build !== false)
      throw new Error('--rollup.sequencerhttp needs --no-build: a node that builds blocks keeps its transactions, an RPC node sends them to the sequencer');
  }
  const replicated = r.publish !== undefined || r.follow !== undefined || r.cluster !== undefined;
  if (cfg.chain.dev === true && replicated) {
    // evm_revert, anvil_reset and a block opened again in a new context take back what a
    // stream already carries; replicas only ever go forward.
    throw new Error('--dev excludes --publish, --follow and --cluster: the test methods rewind the chain, which replicas cannot follow');
  }
  if (cfg.chain.forkUrl !== undefined && (replicated || cfg.chain.genesisFile !== undefined)) {
    throw new Error('--fork-url excludes --genesis, --publish, --follow and --cluster: the fork block is the genesis');
  }
  if (cfg.chain.optimism === true && (cfg.chain.forkUrl !== undefined || cfg.chain.genesisFile !== undefined)) {
    // An OP genesis (op-geth's format, or a null config with --rollup-config) runs OP rules by itself.
    throw new Error('--optimism excludes --genesis and --fork-url: it makes the embedded dev chain an OP Stack chain');
  }
  if (cfg.chain.optimism !== true && cfg.chain.hardfork !== undefined) throw new Error("--hardfork chooses the OP dev chain's last fork: it needs --optimism");
  if (cfg.chain.hardfork !== 'jovian' && (cfg.chain.minBaseFee ?? 0) !== 0)
    throw new Error("--min-base-fee is Jovian's: it needs --optimism --hardfork jovian");
  // A fork serves the test methods as anvil's does, unless refused.
  if (cfg.chain.dev === undefined && cfg.chain.forkUrl !== undefined && cfg.chain.build !== false) cfg.chain.dev = true;
  // Off unless asked for on any chain but the embedded dev one (which the addon recognises).
  if (cfg.chain.dev === undefined && (replicated || cfg.chain.genesisFile !== undefined || cfg.chain.build === false)) cfg.chain.dev = false;
  return cfg;
}
