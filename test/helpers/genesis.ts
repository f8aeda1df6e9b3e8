// geth-style genesis files for tests: the dev chain's rules plus contracts in the alloc.

import { encodeAbiParameters, keccak256, pad, toHex, type Address, type Hex } from 'viem';
import { contract } from './contracts.js';

export const TOKEN = '0x00000000000000000000000000000000000070c3' as Address;
export const PROBE = '0x0000000000000000000000000000000000000b0b' as Address;
export const HOLDER = '0x1111111111111111111111111111111111111111' as Address;
/** anvil adds this CREATE2 deployer to every chain; tests put it in the alloc so both sides hold it. */
export const CREATE2_DEPLOYER = '0x4e59b44847b379578588920ca78fbf26c0b4956c' as Address;
const CREATE2_DEPLOYER_CODE =
  '0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe03601600081602082378035828234f58015156039578182fd5b8082525050506014600cf3';

/** Storage slot of `balanceOf[holder]` (mapping at slot 0). */
export const balanceSlot = (holder: Address): Hex => keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [holder, 0n]));

export interface GenesisAccount {
  balance: Hex;
  nonce?: Hex;
  code?: Hex;
  storage?: Record<Hex, Hex>;
}

export type Forks = 'prague' | 'london';

export function testGenesis(forks: Forks = 'prague', extra: Record<string, GenesisAccount> = {}): Record<string, unknown> {
  const config: Record<string, unknown> = {
    chainId: 31337,
    homesteadBlock: 0,
    eip150Block: 0,
    eip155Block: 0,
    eip158Block: 0,
    byzantiumBlock: 0,
    constantinopleBlock: 0,
    petersburgBlock: 0,
    istanbulBlock: 0,
    berlinBlock: 0,
    londonBlock: 0,
  };
  if (forks === 'prague') {
    Object.assign(config, {
      mergeNetsplitBlock: 0,
      terminalTotalDifficulty: 0,
      terminalTotalDifficultyPassed: true,
      shanghaiTime: 0,
      cancunTime: 0,
      pragueTime: 0,
    });
  }
  const supply = 1_000_000n * 10n ** 18n;
  const alloc: Record<string, GenesisAccount> = {
    [HOLDER]: { balance: toHex(10n ** 21n), nonce: '0x7' },
    '0x2222222222222222222222222222222222222222': { balance: '0x1' },
    [TOKEN]: {
      balance: '0x0',
      code: contract('Token').runtime,
      storage: {
        [balanceSlot(HOLDER)]: pad(toHex(supply)),
        [pad('0x1')]: pad(toHex(supply)),
      },
    },
    [PROBE]: { balance: '0x0', code: contract('Probe').runtime },
    [CREATE2_DEPLOYER]: { balance: '0x0', code: CREATE2_DEPLOYER_CODE },
    ...extra,
  };
  return {
    config,
    nonce: '0x0',
    timestamp: '0x0',
    extraData: '0x',
    gasLimit: '0x1c9c380',
    difficulty: '0x0',
    mixHash: `0x${'00'.repeat(32)}`,
    coinbase: `0x${'00'.repeat(20)}`,
    baseFeePerGas: '0x3b9aca00',
    alloc,
  };
}
