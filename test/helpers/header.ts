// Recomputes a block hash from the block's header fields: keccak256(rlp(header)).
// An independent check of the node's hashing, written against viem's RLP encoder.

import { keccak256, toRlp, type Hex } from 'viem';

type RpcBlock = Record<string, Hex | null | undefined | unknown>;

const int = (v: unknown): Hex => {
  const n = BigInt(v as string);
  return n === 0n ? '0x' : (`0x${n.toString(16).padStart(n.toString(16).length + (n.toString(16).length % 2), '0')}` as Hex);
};

export function headerHash(b: RpcBlock): Hex {
  const fields: Hex[] = [
    b.parentHash as Hex,
    b.sha3Uncles as Hex,
    b.miner as Hex,
    b.stateRoot as Hex,
    b.transactionsRoot as Hex,
    b.receiptsRoot as Hex,
    b.logsBloom as Hex,
    int(b.difficulty),
    int(b.number),
    int(b.gasLimit),
    int(b.gasUsed),
    int(b.timestamp),
    b.extraData as Hex,
    b.mixHash as Hex,
    b.nonce as Hex,
  ];
  const optional: [string, boolean][] = [
    ['baseFeePerGas', true],
    ['withdrawalsRoot', false],
    ['blobGasUsed', true],
    ['excessBlobGas', true],
    ['parentBeaconBlockRoot', false],
    ['requestsHash', false],
  ];
  for (const [key, isInt] of optional) {
    const v = b[key];
    if (v === undefined || v === null) break;
    fields.push(isInt ? int(v) : (v as Hex));
  }
  return keccak256(toRlp(fields));
}
