// What the read scenarios read: the Token contract (deployed by dev account 0 on every
// target), dev accounts and a spread of other addresses, and the calldata of balanceOf.

import { createWalletClient, encodeFunctionData, http, keccak256, encodeAbiParameters, type Address, type Hex, defineChain } from 'viem';
import { contract } from '../test/helpers/contracts.js';
import { devAccount } from '../test/helpers/node.js';
import { rpc, sleep } from './util.js';

export interface Fixtures {
  token: Address;
  /** Ten dev accounts then addresses no one has used: present and absent accounts. */
  holders: Address[];
}

/** 0x…-addresses derived from a label and an index (deterministic, collision-free). */
export function syntheticAddress(label: string, i: number): Address {
  const h = keccak256(`0x${Buffer.from(`${label}:${i}`).toString('hex')}`);
  return `0x${h.slice(26)}` as Address;
}

export function holders(): Address[] {
  const dev = Array.from({ length: 10 }, (_, i) => devAccount(i).address);
  const others = Array.from({ length: 54 }, (_, i) => syntheticAddress('holder', i));
  return [...dev, ...others];
}

/** Deploys Token from dev account 0 and waits until `latest` has its code. */
export async function deployToken(url: string): Promise<Address> {
  const chainId = Number(await rpc<string>(url, 'eth_chainId'));
  const chain = defineChain({
    id: chainId,
    name: 'bench',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  });
  const wallet = createWalletClient({ chain, transport: http(url, { retryCount: 0 }), account: devAccount(0) });
  const { abi, bytecode } = contract('Token');
  const hash = await wallet.deployContract({ abi, bytecode, args: [10n ** 24n] });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const receipt = await rpc<{ contractAddress: Address; status: Hex } | null>(url, 'eth_getTransactionReceipt', [hash]);
    if (receipt) {
      if (receipt.status !== '0x1') throw new Error(`Token deployment failed on ${url}`);
      // A pre-confirmed receipt comes before the block is sealed: wait for `latest` too.
      const code = await rpc<Hex>(url, 'eth_getCode', [receipt.contractAddress, 'latest']);
      if (code.length > 2) return receipt.contractAddress;
    }
    if (Date.now() > deadline) throw new Error(`Token deployment not visible at latest on ${url}`);
    await sleep(50);
  }
}

export function balanceOfData(holder: Address): Hex {
  return encodeFunctionData({ abi: contract('Token').abi, functionName: 'balanceOf', args: [holder] });
}

/** Storage slot of balanceOf[holder] (the mapping is slot 0). */
export function balanceSlot(holder: Address): Hex {
  return keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [holder, 0n]));
}
