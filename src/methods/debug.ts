// Tracing with geth's tracers: debug_traceCall, debug_traceTransaction,
// debug_traceBlockByNumber and debug_traceBlockByHash, the block being built included.
// They run off the event loop, on the addon's own trace threads, bounded by a timeout and
// an output size (see docs/methods.md, Tracing).

import { blockNumberOrTag, blockSelector } from '../validation/block.js';
import { callObject } from '../validation/call.js';
import { argPath, hash32 } from '../validation/primitives.js';
import { traceCallOptions, traceOptions } from '../validation/trace.js';
import type { MethodOptions, MethodTable } from './index.js';

export function debugMethods({ chain }: MethodOptions): MethodTable {
  return {
    debug_traceCall: {
      maxParams: 3,
      cost: 'heavy',
      handler: (p, ctx) => {
        const { options, extra } = traceCallOptions(p[2], argPath(2));
        return chain.traceCall({ tx: callObject(p[0], argPath(0)), block: blockSelector(p[1], 1, 'latest'), options, ...extra }, ctx?.client);
      },
    },
    debug_traceTransaction: {
      maxParams: 2,
      cost: 'heavy',
      handler: (p, ctx) => chain.traceTransaction({ hash: hash32(p[0], argPath(0), 'transaction hash'), options: traceOptions(p[1], argPath(1)) }, ctx?.client),
    },
    debug_traceBlockByNumber: {
      maxParams: 2,
      cost: 'heavy',
      handler: (p, ctx) => chain.traceBlock({ block: blockNumberOrTag(p[0], argPath(0)), options: traceOptions(p[1], argPath(1)) }, ctx?.client),
    },
    debug_traceBlockByHash: {
      maxParams: 2,
      cost: 'heavy',
      handler: (p, ctx) => chain.traceBlock({ block: hash32(p[0], argPath(0), 'block hash'), options: traceOptions(p[1], argPath(1)) }, ctx?.client),
    },
  };
}
