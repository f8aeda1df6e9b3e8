// engine_newPayloadV2–V4's parameters: ExecutionPayloadV1–V3 and OP's V4 (`withdrawalsRoot`)
// checked for shape here (-32602 naming the member) and handed on as JSON text; which
// members a version and a fork take is the chain's rule (crates/chain/src/engine/new_payload.rs).

import type { Chain } from '../native.js';
import type { Method } from '../protocol/jsonrpc.js';
import { address, argPath, expectKeys, fail, hash32, hexBytes, isObject, quantity, quantity64, show, type Path } from '../validation/primitives.js';
import { withdrawals } from './validation.js';

const PAYLOAD_KEYS = new Set([
  'parentHash',
  'feeRecipient',
  'stateRoot',
  'receiptsRoot',
  'logsBloom',
  'prevRandao',
  'blockNumber',
  'gasLimit',
  'gasUsed',
  'timestamp',
  'extraData',
  'baseFeePerGas',
  'blockHash',
  'transactions',
  'withdrawals',
  'blobGasUsed',
  'excessBlobGas',
  'withdrawalsRoot',
]);

function bloom(v: unknown, path: Path): string {
  const b = hexBytes(v, path, 'logsBloom');
  if (b.length !== 2 + 512) throw fail(path, `hex string of 256 bytes expected for logsBloom, got ${show(v)}`);
  return b;
}

/** An ExecutionPayload as JSON text. */
export function executionPayload(v: unknown): string {
  const path = argPath(0);
  if (!isObject(v)) throw fail(path, `execution payload must be an object, got ${show(v)}`);
  expectKeys(v, PAYLOAD_KEYS, path, 'execution payload');
  const at = (k: string): Path => `${path}.${k}`;
  if (!Array.isArray(v.transactions)) throw fail(at('transactions'), `transactions must be an array, got ${show(v.transactions)}`);
  const out: Record<string, unknown> = {
    parentHash: hash32(v.parentHash, at('parentHash'), 'parentHash'),
    feeRecipient: address(v.feeRecipient, at('feeRecipient')),
    stateRoot: hash32(v.stateRoot, at('stateRoot'), 'stateRoot'),
    receiptsRoot: hash32(v.receiptsRoot, at('receiptsRoot'), 'receiptsRoot'),
    logsBloom: bloom(v.logsBloom, at('logsBloom')),
    prevRandao: hash32(v.prevRandao, at('prevRandao'), 'prevRandao'),
    blockNumber: quantity64(v.blockNumber, at('blockNumber'), 'blockNumber'),
    gasLimit: quantity64(v.gasLimit, at('gasLimit'), 'gasLimit'),
    gasUsed: quantity64(v.gasUsed, at('gasUsed'), 'gasUsed'),
    timestamp: quantity64(v.timestamp, at('timestamp'), 'timestamp'),
    extraData: hexBytes(v.extraData, at('extraData'), 'extraData'),
    baseFeePerGas: quantity(v.baseFeePerGas, at('baseFeePerGas'), 'baseFeePerGas'),
    blockHash: hash32(v.blockHash, at('blockHash'), 'blockHash'),
    transactions: v.transactions.map((t, i) => hexBytes(t, `${at('transactions')}[${i}]`, 'transaction')),
  };
  if (v.withdrawals != null) out.withdrawals = withdrawals(v.withdrawals, at('withdrawals'));
  if (v.blobGasUsed != null) out.blobGasUsed = quantity64(v.blobGasUsed, at('blobGasUsed'), 'blobGasUsed');
  if (v.excessBlobGas != null) out.excessBlobGas = quantity64(v.excessBlobGas, at('excessBlobGas'), 'excessBlobGas');
  if (v.withdrawalsRoot != null) out.withdrawalsRoot = hash32(v.withdrawalsRoot, at('withdrawalsRoot'), 'withdrawalsRoot');
  return JSON.stringify(out);
}

/** V3's versioned hashes (JSON text), or null when not given. */
function versionedHashes(v: unknown): string | null {
  if (v == null) return null;
  if (!Array.isArray(v)) throw fail(argPath(1), `versioned hashes must be an array, got ${show(v)}`);
  return JSON.stringify(v.map((h, i) => hash32(h, `${argPath(1)}[${i}]`, 'versioned hash')));
}

/** V4's execution requests (JSON text), or null when not given. */
function executionRequests(v: unknown): string | null {
  if (v == null) return null;
  if (!Array.isArray(v)) throw fail(argPath(3), `execution requests must be an array, got ${show(v)}`);
  return JSON.stringify(v.map((r, i) => hexBytes(r, `${argPath(3)}[${i}]`, 'execution request')));
}

/** engine_newPayloadV{version}: V2 takes the payload, V3 adds the versioned hashes and the
 *  beacon root, V4 the execution requests. */
export function newPayload(chain: Chain, version: number): Method {
  const maxParams = version === 2 ? 1 : version === 3 ? 3 : 4;
  return {
    maxParams,
    handler: (params) =>
      chain.engineNewPayload(
        version,
        executionPayload(params[0]),
        version >= 3 ? versionedHashes(params[1]) : null,
        version >= 3 && params[2] != null ? hash32(params[2], argPath(2), 'parentBeaconBlockRoot') : null,
        version >= 4 ? executionRequests(params[3]) : null,
      ),
  };
}
