// The `preconf-node` command.

import { parseArgs, usage } from './cli.js';
import { runImport } from './commands/import.js';
import { startNode } from './server.js';
import { verifyCommand } from './commands/verify.js';

async function main(): Promise<void> {
  if (process.argv[2] === 'import') {
    process.exitCode = await runImport(process.argv.slice(3));
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
  const node = await startNode(config);
  const info = node.chain.info();
  if (config.server.printAccounts && info.accounts.length > 0) {
    const lines = ['', 'Available accounts (10000 ETH each)', '=================='];
    info.accounts.forEach((a, i) => lines.push(`(${i}) ${a.address}`));
    lines.push('', 'Private keys', '==================');
    info.accounts.forEach((a, i) => lines.push(`(${i}) ${a.privateKey}`));
    lines.push('', 'Mnemonic: test test test test test test test test test test test junk', "Derivation path: m/44'/60'/0'/0/", '');
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  const store = config.chain.datadir ?? 'in memory (--ephemeral)';
  process.stdout.write(
    `Chain id ${info.chainId}, genesis ${info.genesisHash}, head block ${info.head}, store ${store}\n` +
      `Listening on ${node.url} (HTTP JSON-RPC, WebSocket on the same port; ${node.threads} event loop${node.threads > 1 ? 's' : ''})\n`,
  );
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${signal}: shutting down\n`);
    node.close().then(
      () => process.exit(0),
      (e: unknown) => {
        process.stderr.write(`preconf-node: error during shutdown: ${(e as Error).message}\n`);
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
