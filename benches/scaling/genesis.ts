// A genesis of N accounts plus a Token contract with N storage slots (balanceOf of N
// holders), written by streaming so that 10 M accounts never sit in the driver's memory.
// The dev accounts are funded as on the dev chain, so the same keys sign the load.

import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { keccak256, pad, toHex, type Address, type Hex } from 'viem';
import { contract } from '../../test/helpers/contracts.js';
import { devAccount } from '../../test/helpers/node.js';
import { balanceSlot } from '../fixtures.js';

export const TOKEN: Address = '0x00000000000000000000000000000000000070c3';

/** The i-th synthetic account (deterministic). */
export function accountAt(i: number): Address {
  return `0x${keccak256(toHex(`account:${i}`)).slice(26)}` as Address;
}

/** The i-th token holder (slot keccak(holder, 0) holds 1). */
export function holderAt(i: number): Address {
  return `0x${keccak256(toHex(`holder:${i}`)).slice(26)}` as Address;
}

const CONFIG = {
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
  shanghaiTime: 0,
  cancunTime: 0,
  pragueTime: 0,
  terminalTotalDifficulty: 0,
  terminalTotalDifficultyPassed: true,
};

/** Writes the genesis to `path`: dev accounts, `n` accounts with 1 wei, Token with `n` slots. */
export async function writeGenesis(path: string, n: number): Promise<void> {
  const out = createWriteStream(path);
  const write = async (s: string) => {
    if (!out.write(s)) await once(out, 'drain');
  };
  await write(`{"config":${JSON.stringify(CONFIG)},"gasLimit":"0x1c9c380","baseFeePerGas":"0x3b9aca00","difficulty":"0x0","alloc":{`);
  const tenThousandEth = toHex(10_000n * 10n ** 18n);
  for (let i = 0; i < 10; i++) await write(`"${devAccount(i).address}":{"balance":"${tenThousandEth}"},`);
  for (let i = 0; i < n; i++) await write(`"${accountAt(i)}":{"balance":"0x1"},`);
  await write(`"${TOKEN}":{"balance":"0x0","code":"${contract('Token').runtime}","storage":{`);
  // totalSupply (slot 1) then balanceOf[holder_i] = 1.
  await write(`"${pad('0x1' as Hex)}":"${pad(toHex(n))}"`);
  for (let i = 0; i < n; i++) await write(`,"${balanceSlot(holderAt(i))}":"${pad('0x1' as Hex)}"`);
  await write('}}}}');
  out.end();
  await once(out, 'finish');
}
