// Log filters (eth_getLogs, and the logs / pendingLogs subscriptions) with geth's rules.

import { blockNumberOrTag } from './block.js';
import { address, argPath, expectKeys, fail, hash32, isObject, type Path } from './primitives.js';

export interface TopicFilter {
  addresses: string[];
  /** Position-wise: null matches anything; a list matches any of its entries. */
  topics: (string[] | null)[];
}

export interface LogsQuery extends TopicFilter {
  fromBlock?: string;
  toBlock?: string;
  blockHash?: string;
}

const FILTER_KEYS = new Set(['fromBlock', 'toBlock', 'blockHash', 'address', 'topics']);

export function topicFilter(v: Record<string, unknown>, path: Path): TopicFilter {
  let addresses: string[] = [];
  if (v.address !== undefined && v.address !== null) {
    if (Array.isArray(v.address)) addresses = v.address.map((a, i) => address(a, `${path}.address[${i}]`));
    else addresses = [address(v.address, `${path}.address`)];
  }
  let topics: (string[] | null)[] = [];
  if (v.topics !== undefined && v.topics !== null) {
    if (!Array.isArray(v.topics)) throw fail(path, 'topics must be an array');
    if (v.topics.length > 4) throw fail(path, 'topics has more than 4 positions');
    topics = v.topics.map((t, i) => {
      const p = `${path}.topics[${i}]`;
      if (t === null) return null;
      if (Array.isArray(t)) return t.length === 0 ? null : t.map((x, j) => hash32(x, `${p}[${j}]`, 'topic'));
      return [hash32(t, p, 'topic')];
    });
  }
  return { addresses, topics };
}

export function logsQuery(v: unknown, index: number): LogsQuery {
  const path = argPath(index);
  if (v === undefined || v === null) return { addresses: [], topics: [] };
  if (!isObject(v)) throw fail(path, 'filter must be an object');
  expectKeys(v, FILTER_KEYS, path, 'filter');
  const hasRange = (v.fromBlock !== undefined && v.fromBlock !== null) || (v.toBlock !== undefined && v.toBlock !== null);
  const q: LogsQuery = topicFilter(v, path);
  if (v.blockHash !== undefined && v.blockHash !== null) {
    if (hasRange) throw fail(path, 'cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other');
    q.blockHash = hash32(v.blockHash, `${path}.blockHash`, 'blockHash');
    return q;
  }
  if (v.fromBlock !== undefined && v.fromBlock !== null) q.fromBlock = blockNumberOrTag(v.fromBlock, `${path}.fromBlock`);
  if (v.toBlock !== undefined && v.toBlock !== null) q.toBlock = blockNumberOrTag(v.toBlock, `${path}.toBlock`);
  return q;
}

interface LogLike {
  address: string;
  topics: string[];
}

/** geth's matching: address in the set; each topic position null or one of the listed. */
export function matchesLog(f: TopicFilter, log: LogLike): boolean {
  if (f.addresses.length > 0 && !f.addresses.includes(log.address)) return false;
  if (f.topics.length > log.topics.length) return false;
  return f.topics.every((want, i) => want === null || want.includes(log.topics[i]!));
}
