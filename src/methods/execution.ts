// EVM execution: eth_call, eth_estimateGas, eth_simulateV1. These run off the event loop
// in the addon, so a heavy call never holds up other connections.

import { blockSelector } from '../validation/block.js';
import { blockOverrides, callObject, stateOverrides } from '../validation/call.js';
import { argPath } from '../validation/primitives.js';
import { simulatePayload } from '../validation/simulate.js';
import type { MethodOptions, MethodTable } from './index.js';

export function executionMethods({ chain, preconf }: MethodOptions): MethodTable {
  const table: MethodTable = {
    eth_call: {
      maxParams: 4,
      cost: 'heavy',
      handler: (p, ctx) =>
        chain.call(
          {
            tx: callObject(p[0], argPath(0)),
            block: blockSelector(p[1], 1, 'latest'),
            stateOverrides: stateOverrides(p[2], argPath(2)),
            blockOverrides: blockOverrides(p[3], argPath(3)),
          },
          ctx?.client,
        ),
    },
    eth_estimateGas: {
      maxParams: 3,
      cost: 'heavy',
      // Without a block, estimate against the newest pre-confirmation: a wallet estimating
      // its next transaction must see its previous one (geth defaults to latest, where a
      // contract deployed 200 ms ago does not exist yet). Documented in docs/methods.md.
      handler: (p, ctx) =>
        chain.estimateGas(
          {
            tx: callObject(p[0], argPath(0)),
            block: blockSelector(p[1], 1, 'pending'),
            stateOverrides: stateOverrides(p[2], argPath(2)),
          },
          ctx?.client,
        ),
    },
    // geth's semantics (rerun until the list settles; `error` when the call fails), but
    // like eth_estimateGas it defaults to pending: the list for a wallet's next
    // transaction must see its previous one. Documented in docs/methods.md.
    eth_createAccessList: {
      maxParams: 3,
      cost: 'heavy',
      handler: (p, ctx) =>
        chain.createAccessList(
          {
            tx: callObject(p[0], argPath(0)),
            block: blockSelector(p[1], 1, 'pending'),
            stateOverrides: stateOverrides(p[2], argPath(2)),
          },
          ctx?.client,
        ),
    },
  };
  if (preconf) {
    // Simulation serves the block being built; without pre-confirmations it does not exist.
    table.eth_simulateV1 = {
      maxParams: 2,
      cost: 'heavy',
      handler: (p, ctx) => chain.simulate({ payload: simulatePayload(p[0], argPath(0)), block: blockSelector(p[1], 1, 'latest') }, ctx?.client),
    };
  }
  return table;
}
