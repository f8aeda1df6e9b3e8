// Result shapes for `speconly` fixtures. Upstream validates such results against the
// execution-apis OpenRPC schema, which the kit does not ship; these checks restate the parts
// of that schema for the methods that have speconly fixtures (types, required and allowed keys,
// hex patterns, ratio bounds). A speconly fixture for a method without a shape here fails, so a
// new fixture cannot pass unchecked.

import { isObject, JsonNumber, typeName, type Json } from './json.js';

/** One shape violation: where, and what was wrong. */
export interface ShapeProblem {
  path: string;
  problem: string;
  actual: Json | undefined;
}

type Check = (v: Json, path: string, out: ShapeProblem[]) => void;

// execution-apis `uint`: lower-case hex, no leading zeros.
const UINT = /^0x(?:0|[1-9a-f][0-9a-f]*)$/;

const uint: Check = (v, path, out) => {
  if (typeof v !== 'string' || !UINT.test(v))
    out.push({ path, problem: 'expected a hex quantity (0x0 or 0x + lower-case hex without leading zeros)', actual: v });
};

// execution-apis `ratio`: a number in [0, 1].
const ratio: Check = (v, path, out) => {
  if (!(v instanceof JsonNumber)) {
    out.push({ path, problem: `expected a number, got ${typeName(v)}`, actual: v });
    return;
  }
  const x = Number(v.literal);
  if (!(x >= 0 && x <= 1)) out.push({ path, problem: 'expected a ratio between 0 and 1', actual: v });
};

const arrayOf =
  (item: Check): Check =>
  (v, path, out) => {
    if (!Array.isArray(v)) {
      out.push({ path, problem: `expected an array, got ${typeName(v)}`, actual: v });
      return;
    }
    v.forEach((x, i) => item(x, `${path}[${i}]`, out));
  };

const object =
  (required: Record<string, Check>, optional: Record<string, Check>): Check =>
  (v, path, out) => {
    if (!isObject(v)) {
      out.push({ path, problem: `expected an object, got ${typeName(v)}`, actual: v });
      return;
    }
    for (const [key, check] of Object.entries(required)) {
      if (!(key in v)) out.push({ path: `${path}.${key}`, problem: 'required key is missing', actual: undefined });
      else check(v[key]!, `${path}.${key}`, out);
    }
    for (const key of Object.keys(v)) {
      if (key in required) continue;
      const check = optional[key];
      if (check === undefined) out.push({ path: `${path}.${key}`, problem: 'key not allowed by the schema', actual: v[key] });
      else check(v[key]!, `${path}.${key}`, out);
    }
  };

const SHAPES: Record<string, Check> = {
  eth_estimateGas: uint,
  eth_feeHistory: object(
    { oldestBlock: uint, baseFeePerGas: arrayOf(uint), gasUsedRatio: arrayOf(ratio) },
    { reward: arrayOf(arrayOf(uint)), baseFeePerBlobGas: arrayOf(uint), blobGasUsedRatio: arrayOf(ratio) },
  ),
};

export const methodsWithShape = (): string[] => Object.keys(SHAPES);

/** Checks a result against the method's shape; `path` names the result in the response. */
export function checkShape(method: string, result: Json, path: string): ShapeProblem[] {
  const check = SHAPES[method];
  if (check === undefined)
    return [{ path, problem: `speconly fixture, but the runner has no result shape for ${method} (add one in test/compat/shapes.ts)`, actual: result }];
  const out: ShapeProblem[] = [];
  check(result, path, out);
  return out;
}
