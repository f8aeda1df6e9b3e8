// The OP Stack's flags: `--optimism` (anvil's name) and the fixed L1 values the OP dev
// chain's L1-info deposits carry, named after the L1Block fields op-geth reads the fee from;
// `--rollup.sequencerhttp` (op-geth's name), where an RPC node sends transactions.

import type { NodeOptions } from '../native.js';
import type { Config } from './config.js';

/** The shape of flags.ts's `Flag` that these use (declared here: flags.ts imports this file). */
interface OpFlag {
  name: string;
  value?: string;
  help: string;
  chainDefault?: keyof NodeOptions;
  apply(cfg: Config, v: string): void;
}

const count = (name: string, v: string, max: number): number => {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0 || n > max) throw new Error(`--${name} must be an integer from 0 to ${max}, got "${v}"`);
  return n;
};

const U32_MAX = 0xffff_ffff;

function sequencerUrl(v: string): string {
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw new Error(`--rollup.sequencerhttp must be an http(s) URL (http://HOST:PORT), got "${v}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--rollup.sequencerhttp must be an http(s) URL, got "${v}"`);
  return url.href;
}

export const OP_FLAGS: OpFlag[] = [
  {
    name: 'optimism',
    help: 'an OP Stack dev chain (as anvil --optimism): every block opens with the L1-info deposit, transactions pay the L1 data fee (docs/op-stack.md)',
    apply: (c) => void (c.chain.optimism = true),
  },
  {
    name: 'rollup.sequencerhttp',
    value: 'URL',
    help: "with --no-build (an RPC node): send transactions to the sequencer's HTTP endpoint (op-geth's flag); eth_sendRawTransactionSync answers from this node's pending block (docs/op-stack.md)",
    apply: (c, v) => void (c.sequencerHttp = sequencerUrl(v)),
  },
  {
    name: 'hardfork',
    value: 'NAME',
    help: "with --optimism: the last OP fork active from genesis, isthmus or jovian (anvil's flag; default isthmus)",
    apply: (c, v) => {
      if (v !== 'isthmus' && v !== 'jovian') throw new Error(`--hardfork must be isthmus or jovian, got "${v}"`);
      c.chain.hardfork = v;
    },
  },
  {
    name: 'min-base-fee',
    value: 'WEI',
    help: "with --optimism --hardfork jovian: Jovian's minimum base fee, in the genesis extraData and every block's after",
    chainDefault: 'minBaseFee',
    apply: (c, v) => void (c.chain.minBaseFee = count('min-base-fee', v, Number.MAX_SAFE_INTEGER)),
  },
  {
    name: 'l1-base-fee',
    value: 'WEI',
    help: 'with --optimism: the L1 base fee the L1-info deposits carry',
    chainDefault: 'l1BaseFee',
    apply: (c, v) => void (c.chain.l1BaseFee = count('l1-base-fee', v, Number.MAX_SAFE_INTEGER)),
  },
  {
    name: 'l1-blob-base-fee',
    value: 'WEI',
    help: 'with --optimism: the L1 blob base fee the L1-info deposits carry',
    chainDefault: 'l1BlobBaseFee',
    apply: (c, v) => void (c.chain.l1BlobBaseFee = count('l1-blob-base-fee', v, Number.MAX_SAFE_INTEGER)),
  },
  {
    name: 'l1-base-fee-scalar',
    value: 'N',
    help: 'with --optimism: the L1 base fee scalar (Ecotone)',
    chainDefault: 'l1BaseFeeScalar',
    apply: (c, v) => void (c.chain.l1BaseFeeScalar = count('l1-base-fee-scalar', v, U32_MAX)),
  },
  {
    name: 'l1-blob-base-fee-scalar',
    value: 'N',
    help: 'with --optimism: the L1 blob base fee scalar (Ecotone)',
    chainDefault: 'l1BlobBaseFeeScalar',
    apply: (c, v) => void (c.chain.l1BlobBaseFeeScalar = count('l1-blob-base-fee-scalar', v, U32_MAX)),
  },
  {
    name: 'l1-operator-fee-scalar',
    value: 'N',
    help: 'with --optimism: the operator fee scalar: each transaction pays gas used x N / 1e6 wei more (Jovian: gas used x N x 100)',
    chainDefault: 'l1OperatorFeeScalar',
    apply: (c, v) => void (c.chain.l1OperatorFeeScalar = count('l1-operator-fee-scalar', v, U32_MAX)),
  },
  {
    name: 'l1-operator-fee-constant',
    value: 'WEI',
    help: 'with --optimism: the operator fee constant (Isthmus): each transaction pays WEI more',
    chainDefault: 'l1OperatorFeeConstant',
    apply: (c, v) => void (c.chain.l1OperatorFeeConstant = count('l1-operator-fee-constant', v, Number.MAX_SAFE_INTEGER)),
  },
  {
    name: 'l1-da-footprint-gas-scalar',
    value: 'N',
    help: "with --optimism --hardfork jovian: the DA footprint gas scalar (Jovian; 0: op-node's default, 400)",
    chainDefault: 'l1DaFootprintGasScalar',
    apply: (c, v) => void (c.chain.l1DaFootprintGasScalar = count('l1-da-footprint-gas-scalar', v, 0xffff)),
  },
];
