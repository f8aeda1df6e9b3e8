// The test methods anvil and Hardhat serve, under their names and aliases (anvil's own
// table: anvil_*, with evm_* and hardhat_* where anvil accepts them). Registered only on a
// node started with --dev (or running the embedded dev chain): elsewhere each answers
// -32601 like any unknown method. What each does to pending, latest, the pool and the
// streams: docs/test-methods.md.

import { callObject } from '../validation/call.js';
import { accountCode, address, argPath, bool, fail, hash32, hexBytes, show, storageSlot } from '../validation/primitives.js';
import { forkReset, devNumber, mineOptions, optionalDevNumber, storageValue } from '../validation/dev.js';
import type { MethodOptions, MethodTable } from './index.js';
import type { Method } from '../protocol/jsonrpc.js';

/** Registers `method` under each of `names`. */
function named(table: MethodTable, names: string[], method: Method): void {
  for (const name of names) table[name] = method;
}

export function devMethods({ chain }: MethodOptions): MethodTable {
  const t: MethodTable = {};
  const addr = (p: unknown[], i = 0): string => address(p[i], argPath(i));

  named(t, ['anvil_setBalance', 'hardhat_setBalance'], {
    maxParams: 2,
    handler: (p) => chain.devSetBalance(addr(p), devNumber(p[1], argPath(1), 'balance', 256), false),
  });
  named(t, ['anvil_addBalance', 'hardhat_addBalance'], {
    maxParams: 2,
    handler: (p) => chain.devSetBalance(addr(p), devNumber(p[1], argPath(1), 'balance', 256), true),
  });
  named(t, ['anvil_setNonce', 'hardhat_setNonce', 'evm_setAccountNonce'], {
    maxParams: 2,
    handler: (p) => chain.devSetNonce(addr(p), devNumber(p[1], argPath(1), 'nonce')),
  });
  named(t, ['anvil_setCode', 'hardhat_setCode'], {
    maxParams: 2,
    handler: (p) => chain.devSetCode(addr(p), accountCode(p[1], argPath(1))),
  });
  named(t, ['anvil_setStorageAt', 'hardhat_setStorageAt'], {
    maxParams: 3,
    handler: (p) => chain.devSetStorageAt(addr(p), storageSlot(p[1], argPath(1)), storageValue(p[2], argPath(2))),
  });
  // anvil's argument order: the account (or owner and spender) first, then the token.
  named(t, ['anvil_dealERC20', 'hardhat_dealERC20', 'anvil_setERC20Balance'], {
    maxParams: 3,
    handler: (p) => chain.devDealErc20(addr(p, 0), addr(p, 1), devNumber(p[2], argPath(2), 'amount', 256)),
  });
  t.anvil_setERC20Allowance = {
    maxParams: 4,
    handler: (p) => chain.devSetErc20Allowance(addr(p, 0), addr(p, 1), addr(p, 2), devNumber(p[3], argPath(3), 'amount', 256)),
  };

  named(t, ['anvil_impersonateAccount', 'hardhat_impersonateAccount'], { maxParams: 1, handler: (p) => chain.devImpersonate(addr(p), true) });
  named(t, ['anvil_stopImpersonatingAccount', 'hardhat_stopImpersonatingAccount'], { maxParams: 1, handler: (p) => chain.devImpersonate(addr(p), false) });
  named(t, ['anvil_autoImpersonateAccount', 'hardhat_autoImpersonateAccount'], {
    maxParams: 1,
    handler: (p) => chain.devAutoImpersonate(bool(p[0], argPath(0), 'enabled')),
  });
  t.eth_sendUnsignedTransaction = { maxParams: 1, handler: (p) => chain.devSendUnsigned(callObject(p[0], argPath(0))) };

  named(t, ['anvil_mine', 'hardhat_mine'], {
    maxParams: 2,
    handler: (p) => chain.devMine(optionalDevNumber(p[0], argPath(0), 'blocks') ?? '0x1', optionalDevNumber(p[1], argPath(1), 'interval')),
  });
  // ganache's evm_mine answers "0x0" (anvil keeps that).
  t.evm_mine = {
    maxParams: 1,
    handler: async (p) => {
      const o = mineOptions(p[0]);
      await chain.devMine(o.blocks, undefined, o.timestamp);
      return '"0x0"';
    },
  };
  // The same, answering the blocks it sealed with their transactions and what each returned.
  named(t, ['anvil_mine_detailed', 'evm_mine_detailed'], {
    maxParams: 1,
    handler: (p) => {
      const o = mineOptions(p[0]);
      return chain.devMineDetailed(o.blocks, o.timestamp);
    },
  });
  named(t, ['anvil_setAutomine', 'evm_setAutomine'], { maxParams: 1, handler: (p) => chain.devSetAutomine(bool(p[0], argPath(0), 'enabled')) });
  named(t, ['anvil_getAutomine', 'hardhat_getAutomine'], { maxParams: 0, handler: () => chain.devAutomine() });
  named(t, ['anvil_setIntervalMining', 'evm_setIntervalMining'], {
    maxParams: 1,
    handler: (p) => chain.devSetIntervalMining(devNumber(p[0], argPath(0), 'interval')),
  });
  t.anvil_getIntervalMining = { maxParams: 0, handler: () => chain.devIntervalMining() };

  named(t, ['anvil_increaseTime', 'evm_increaseTime'], { maxParams: 1, handler: (p) => chain.devIncreaseTime(devNumber(p[0], argPath(0), 'seconds', 63)) });
  named(t, ['anvil_setTime', 'evm_setTime'], { maxParams: 1, handler: (p) => chain.devSetTime(devNumber(p[0], argPath(0), 'timestamp')) });
  named(t, ['anvil_setNextBlockTimestamp', 'evm_setNextBlockTimestamp'], {
    maxParams: 1,
    handler: (p) => chain.devSetNextBlockTimestamp(devNumber(p[0], argPath(0), 'timestamp')),
  });
  named(t, ['anvil_setNextBlockBaseFeePerGas', 'hardhat_setNextBlockBaseFeePerGas'], {
    maxParams: 1,
    handler: (p) => chain.devSetNextBlockBaseFee(devNumber(p[0], argPath(0), 'base fee')),
  });

  named(t, ['anvil_setCoinbase', 'hardhat_setCoinbase'], { maxParams: 1, handler: (p) => chain.devSetCoinbase(addr(p)) });
  named(t, ['anvil_setBlockGasLimit', 'evm_setBlockGasLimit'], {
    maxParams: 1,
    handler: (p) => chain.devSetBlockGasLimit(devNumber(p[0], argPath(0), 'gas limit')),
  });
  t.anvil_setBlockTimestampInterval = {
    maxParams: 1,
    handler: async (p) => {
      await chain.devSetBlockTimestampInterval(devNumber(p[0], argPath(0), 'interval'));
      return 'null';
    },
  };
  t.anvil_removeBlockTimestampInterval = { maxParams: 0, handler: () => chain.devSetBlockTimestampInterval() };

  named(t, ['anvil_snapshot', 'evm_snapshot'], { maxParams: 0, handler: () => chain.devSnapshot() });
  named(t, ['anvil_revert', 'evm_revert'], { maxParams: 1, handler: (p) => chain.devRevert(devNumber(p[0], argPath(0), 'snapshot id', 256)) });
  named(t, ['anvil_reset', 'hardhat_reset'], {
    maxParams: 1,
    handler: (p) => {
      const fork = forkReset(p[0]);
      return chain.devReset(fork !== undefined, fork?.url, fork?.block);
    },
  });

  named(t, ['anvil_dropTransaction', 'hardhat_dropTransaction'], {
    maxParams: 1,
    handler: (p) => chain.devDropTransaction(hash32(p[0], argPath(0), 'transaction hash')),
  });
  named(t, ['anvil_dropAllTransactions', 'hardhat_dropAllTransactions'], { maxParams: 0, handler: () => chain.devDropAllTransactions() });
  t.anvil_removePoolTransactions = { maxParams: 1, handler: (p) => chain.devDropTransactionsFrom(addr(p)) };

  // Where this node has nothing to change, it answers as anvil does in the same case
  // (docs/test-methods.md): anvil's toggle mutes its line per call, which this node does
  // not write; a URL only matters to a fork, and this node forks no chain.
  named(t, ['anvil_setLoggingEnabled', 'hardhat_setLoggingEnabled'], {
    maxParams: 1,
    handler: (p) => {
      bool(p[0], argPath(0), 'enabled');
      return 'null';
    },
  });
  t.anvil_setRpcUrl = {
    maxParams: 1,
    handler: (p) => {
      if (typeof p[0] !== 'string') throw fail(argPath(0), `must be a URL string, got ${show(p[0])}`);
      return 'null';
    },
  };
  named(t, ['anvil_setMinGasPrice', 'hardhat_setMinGasPrice'], {
    maxParams: 1,
    handler: (p) => {
      devNumber(p[0], argPath(0), 'gas price', 256);
      return chain.devSetMinGasPrice();
    },
  });
  t.anvil_nodeInfo = { maxParams: 0, handler: () => chain.devNodeInfo() };
  named(t, ['anvil_metadata', 'hardhat_metadata'], { maxParams: 0, handler: () => chain.devMetadata() });
  // The genesis block's timestamp, as a JSON number (anvil's answer).
  t.anvil_getGenesisTime = {
    maxParams: 0,
    handler: async () => BigInt((JSON.parse(await chain.getBlock('earliest', false)) as { timestamp: string }).timestamp).toString(),
  };

  named(t, ['anvil_dumpState', 'hardhat_dumpState'], {
    maxParams: 1,
    handler: (p) => {
      // anvil's `preserveHistoricalStates`: this node's history stays in its store.
      if (p[0] !== undefined && p[0] !== null && typeof p[0] !== 'boolean') throw fail(argPath(0), `must be true or false, got ${show(p[0])}`);
      return chain.devDumpState();
    },
  });
  named(t, ['anvil_loadState', 'hardhat_loadState'], { maxParams: 1, handler: (p) => chain.devLoadState(hexBytes(p[0], argPath(0), 'state dump')) });
  return t;
}
