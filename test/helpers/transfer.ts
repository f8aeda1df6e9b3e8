// The signed transfer tests send: EIP-1559, 21 000 gas, on the dev chain (31337), with fees
// every dev node accepts. A test names what matters to it (sender, nonce, recipient, value)
// and overrides a fee or the chain only when that is what it tests.

import { parseGwei, type Address, type Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';

export interface Transfer {
  to: Address;
  nonce: number;
  /** Wei (1 unless given). */
  value?: bigint;
  gas?: bigint;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  chainId?: number;
}

/** Above the dev chain's base fee for as long as a test runs. */
export const TRANSFER_FEE_CAP = parseGwei('50');

export function signTransfer(from: PrivateKeyAccount, t: Transfer): Promise<Hex> {
  return from.signTransaction({
    chainId: t.chainId ?? 31337,
    type: 'eip1559',
    to: t.to,
    value: t.value ?? 1n,
    gas: t.gas ?? 21_000n,
    maxFeePerGas: t.maxFeePerGas ?? TRANSFER_FEE_CAP,
    maxPriorityFeePerGas: t.maxPriorityFeePerGas ?? 1n,
    nonce: t.nonce,
  });
}
