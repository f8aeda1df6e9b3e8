// The Engine API's method table: served only on the authenticated port (--authrpc.port),
// never on the public one. Each version is its own entry, as op-node calls them by name.

import type { Chain } from '../native.js';
import type { Method } from '../protocol/jsonrpc.js';
import { newPayload } from './payload.js';
import { blockHashes, capabilities, forkchoiceState, payloadAttributes, payloadId, rangeBound } from './validation.js';

function forkchoiceUpdated(chain: Chain, version: number): Method {
  return {
    maxParams: 2,
    handler: (params) => chain.engineForkchoiceUpdated(version, forkchoiceState(params[0]), payloadAttributes(params[1])),
  };
}

function getPayload(chain: Chain, version: number): Method {
  return { maxParams: 1, handler: (params) => chain.engineGetPayload(version, payloadId(params[0])) };
}

export function engineMethods(chain: Chain): Map<string, Method> {
  const table: Record<string, Method> = {
    engine_forkchoiceUpdatedV1: forkchoiceUpdated(chain, 1),
    engine_forkchoiceUpdatedV2: forkchoiceUpdated(chain, 2),
    engine_forkchoiceUpdatedV3: forkchoiceUpdated(chain, 3),
    engine_getPayloadV1: getPayload(chain, 1),
    engine_getPayloadV2: getPayload(chain, 2),
    engine_getPayloadV3: getPayload(chain, 3),
    engine_getPayloadV4: getPayload(chain, 4),
    engine_newPayloadV2: newPayload(chain, 2),
    engine_newPayloadV3: newPayload(chain, 3),
    engine_newPayloadV4: newPayload(chain, 4),
    engine_getPayloadBodiesByHashV1: { maxParams: 1, handler: (params) => chain.engineGetPayloadBodiesByHash(blockHashes(params[0])) },
    engine_getPayloadBodiesByRangeV1: {
      maxParams: 2,
      handler: (params) => chain.engineGetPayloadBodiesByRange(rangeBound(params[0], 0, 'start'), rangeBound(params[1], 1, 'count')),
    },
  };
  // The consensus client's list is informational: the answer is this node's methods.
  const served = JSON.stringify([...Object.keys(table), 'engine_exchangeCapabilities'].sort());
  table.engine_exchangeCapabilities = {
    maxParams: 1,
    handler: (params) => {
      capabilities(params[0]);
      return served;
    },
  };
  return new Map(Object.entries(table));
}
