// The signed transfer tests send: EIP-1559, 21 000 gas, on the dev chain (31337), with fees
// every dev node accepts. A test names what matters to it (sender, nonce, recipient, value)
// and overrides a fee or the chain only when that is what it tests.

import { parseGwei, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { rpc } from './node.js';

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

/** Load for crash tests: each sender sends transfers to fresh addresses, one after another
 *  from `nonces[i]` on (advanced as they are taken), until `stop()` or the node refuses or
 *  stops answering. `onAccepted` hears every hash the node answered. */
export function sendUntilStopped(
  url: string,
  senders: PrivateKeyAccount[],
  nonces: number[],
  onAccepted: (hash: Hex) => void = () => {},
): { stop(): Promise<void> } {
  let sending = true;
  const load = Promise.all(
    senders.map(async (s, i) => {
      while (sending) {
        const raw = await signTransfer(s, { to: privateKeyToAccount(generatePrivateKey()).address, nonce: nonces[i]!, maxFeePerGas: parseGwei('20') });
        const r = await rpc(url, 'eth_sendRawTransaction', [raw]).catch(() => null);
        if (!r || r.error) return;
        onAccepted(r.result as Hex);
        nonces[i]!++;
      }
    }),
  );
  return {
    stop: async () => {
      sending = false;
      await load;
    },
  };
}
