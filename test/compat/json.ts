// A JSON reader that keeps numbers exact. JSON.parse turns every number into a double, so
// two different large integers could compare equal; the suite compares numbers by value, so
// each number keeps its literal and a canonical form of its decimal value.

export type Json = null | boolean | string | JsonNumber | Json[] | JsonObject;
export type JsonObject = { [key: string]: Json };

export class JsonNumber {
  /** Canonical value: `0`, or `[-]digits` + `e` + exponent with no leading/trailing zeros. */
  readonly value: string;
  constructor(readonly literal: string) {
    this.value = canonicalNumber(literal);
  }
}

export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at offset ${offset}`);
    this.name = 'JsonSyntaxError';
  }
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

function canonicalNumber(literal: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (m === null) throw new Error(`not a JSON number: ${literal}`);
  const [, sign, int = '', frac = '', exp = '0'] = m;
  let digits = (int + frac).replace(/^0+/, '');
  if (digits === '') return '0'; // -0 and 0.000 are zero
  let exponent = BigInt(exp) - BigInt(frac.length);
  const trimmed = digits.replace(/0+$/, '');
  exponent += BigInt(digits.length - trimmed.length);
  digits = trimmed;
  return `${sign}${digits}e${exponent}`;
}

/** Parses one JSON text (surrounding whitespace allowed). Throws JsonSyntaxError. */
export function parseJson(text: string): Json {
  let i = 0;
  const ws = (): void => {
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      i++;
    }
  };
  const fail = (what: string): never => {
    throw new JsonSyntaxError(i < text.length ? `${what}, found ${JSON.stringify(text[i])}` : `${what}, found end of input`, i);
  };
  const literal = (word: string, v: Json): Json => {
    if (text.startsWith(word, i)) {
      i += word.length;
      return v;
    }
    return fail('unexpected token');
  };
  const str = (): string => {
    // Find the closing quote, then let JSON.parse decode escapes of this one string.
    const start = i++;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        try {
          return JSON.parse(text.slice(start, i)) as string;
        } catch {
          throw new JsonSyntaxError('invalid string', start);
        }
      }
      if (c === 0x5c) i += 2;
      else if (c < 0x20) fail('control character in string');
      else i++;
    }
    return fail('unterminated string');
  };
  const value = (depth: number): Json => {
    if (depth > 512) fail('nesting too deep');
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const obj: JsonObject = Object.create(null) as JsonObject;
      ws();
      if (text[i] === '}') {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a key');
        const key = str();
        ws();
        if (text[i] !== ':') fail('expected ":"');
        i++;
        obj[key] = value(depth + 1); // a repeated key keeps the last value, as Go does
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return obj;
        } else fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      i++;
      const arr: Json[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value(depth + 1));
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') {
          i++;
          return arr;
        } else fail('expected "," or "]"');
      }
    }
    if (c === '"') return str();
    if (c === 't') return literal('true', true);
    if (c === 'f') return literal('false', false);
    if (c === 'n') return literal('null', null);
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (m === null) return fail('expected a value');
    i += m[0].length;
    return new JsonNumber(m[0]);
  };
  const v = value(0);
  ws();
  if (i !== text.length) fail('trailing data');
  return v;
}

export const isObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof JsonNumber);

export function typeName(v: Json): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (v instanceof JsonNumber) return 'number';
  return typeof v; // boolean, string, object
}

/** Compact JSON text; numbers keep their literal. */
export function stringify(v: Json): string {
  if (v instanceof JsonNumber) return v.literal;
  if (Array.isArray(v)) return `[${v.map(stringify).join(',')}]`;
  if (isObject(v))
    return `{${Object.keys(v)
      .map((k) => `${JSON.stringify(k)}:${stringify(v[k]!)}`)
      .join(',')}}`;
  return JSON.stringify(v);
}
