// The `preconf-node` command.

import { parseArgs, usage } from './cli/index.js';
import { runImport } from './commands/import.js';
import { verifyCommand } from './commands/verify.js';
import { exportCommand } from './commands/export.js';
import { logger } from './log/index.js';

async function main(): Promise<void> {
  if (process.argv[2] === 'import') {
    process.exitCode = await runImport(process.argv.slice(3));
    return;
  }
  if (process.argv[2] === 'export') {
    process.exitCode = await exportCommand(process.argv.slice(3));
    return;
  }
  if (process.argv[2] === 'verify') {
    process.exit(await verifyCommand(process.argv.slice(3)));
  }
  let config;
  try {
    config = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`preconf-node: ${(e as Error).message}\n`);
    process.exit(2);
  }
  if (config === 'help') {
    process.stdout.write(usage());
    return;
  }
  // Imported here, not above: where no uWebSockets.js build loads, that import throws one
  // line (transport/uws.ts) that main() prints, and the subcommands never need it.
  const { startNode } = await import('./server.js');
  const { uwsBuild } = await import('./transport/uws.js');
  const node = await startNode(config);
  const info = node.chain.info();
  const log = logger();
  // A person at a terminal gets anvil's banner; a log pipeline gets the addresses only.
  if (config.server.printAccounts && info.accounts.length > 0 && config.log?.format !== 'pretty') {
    log.info({ accounts: info.accounts.map((a) => a.address) }, "dev accounts (anvil's well-known keys)");
  } else if (config.server.printAccounts && info.accounts.length > 0) {
    const lines = ['', 'Available accounts (10000 ETH each)', '=================='];
    info.accounts.forEach((a, i) => lines.push(`(${i}) ${a.address}`));
    lines.push('', 'Private keys', '==================');
    info.accounts.forEach((a, i) => lines.push(`(${i}) ${a.privateKey}`));
    lines.push('', 'Mnemonic: test test test test test test test test test test test junk', "Derivation path: m/44'/60'/0'/0/", '');
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  const store = config.chain.datadir ?? 'in memory (--ephemeral)';
  const { server, chain } = config;
  log.info(
    {
      chainId: info.chainId,
      genesis: info.genesisHash,
      head: info.head,
      store,
      historyBlocks: chain.historyBlocks ?? 0,
      blockTimeMs: chain.blockTimeMs,
      preconfIntervalMs: chain.preconfIntervalMs,
      build: chain.build ?? true,
      logLevel: config.log?.level,
    },
    `Chain id ${info.chainId}, genesis ${info.genesisHash}, head block ${info.head}, store ${store}`,
  );
  log.info(
    { url: node.url, host: server.host, port: node.port, threads: node.threads, uws: `${uwsBuild.name}@${uwsBuild.version}`, node: process.version },
    `Listening on ${node.url} (HTTP JSON-RPC, WebSocket on the same port; ${node.threads} event loop${node.threads > 1 ? 's' : ''}; Node.js ${process.version}, uWebSockets.js ${uwsBuild.version} from ${uwsBuild.name})`,
  );
  if (node.chain.devEnabled()) log.info({ dev: true }, 'Test methods on (anvil_*, evm_*, hardhat_*); --no-dev turns them off');
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, `${signal}: shutting down`);
    node.close().then(
      () => process.exit(0),
      (e: unknown) => {
        log.error({ err: e }, `error during shutdown: ${(e as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((e: unknown) => {
  process.stderr.write(`preconf-node: ${(e as Error).message}\n`);
  process.exit(1);
});
