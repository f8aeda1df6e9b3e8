// The exact text of request ids. JSON.parse turns a number id into a double, which loses
// digits past 2^53 (9007199254740993 -> ...992), turns 1e400 into Infinity and large
// integers into exponent form; JSON-RPC says the response's id is the request's. Only such
// ids send us back to the raw text (a safe integer is echoed as parsed), so the common
// request pays nothing.

/** Whether a parsed number id may not survive JSON.stringify unchanged. */
export const idNeedsRawText = (id: unknown): boolean => typeof id === 'number' && !Number.isSafeInteger(id);

/**
 * The raw text of the "id" member of each request in `body`: one entry for a single
 * request, one per item of a batch (undefined where an item has none or is not an object).
 * As in JSON.parse, the last of duplicate members wins. `body` is valid JSON by now.
 */
export function rawIds(body: string): (string | undefined)[] {
  const s = new Scanner(body);
  s.space();
  if (body.charCodeAt(s.at) !== 0x5b /* [ */) return [s.object()];
  const out: (string | undefined)[] = [];
  s.at++;
  s.space();
  if (body.charCodeAt(s.at) === 0x5d /* ] */) return out;
  for (;;) {
    s.space();
    out.push(body.charCodeAt(s.at) === 0x7b /* { */ ? s.object() : (s.skipValue(), undefined));
    s.space();
    if (body.charCodeAt(s.at++) !== 0x2c /* , */) return out;
  }
}

class Scanner {
  at = 0;
  constructor(private readonly text: string) {}

  space(): void {
    const t = this.text;
    for (;;) {
      const c = t.charCodeAt(this.at);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return;
      this.at++;
    }
  }

  /** An object at `at`: the raw text of its last "id" member, if any. */
  object(): string | undefined {
    let id: string | undefined;
    this.at++; // {
    this.space();
    if (this.text.charCodeAt(this.at) === 0x7d /* } */) {
      this.at++;
      return undefined;
    }
    for (;;) {
      this.space();
      const keyStart = this.at;
      this.skipString();
      const rawKey = this.text.slice(keyStart, this.at);
      this.space();
      this.at++; // :
      this.space();
      const valueStart = this.at;
      this.skipValue();
      // A key may spell "id" with escapes ("\u0069d"); JSON.parse would read it as id.
      if (rawKey === '"id"' || (rawKey.includes('\\') && JSON.parse(rawKey) === 'id')) id = this.text.slice(valueStart, this.at);
      this.space();
      if (this.text.charCodeAt(this.at++) !== 0x2c /* , */) return id;
    }
  }

  skipString(): void {
    const t = this.text;
    this.at++; // opening quote
    for (;;) {
      const c = t.charCodeAt(this.at++);
      if (c === 0x22) return;
      if (c === 0x5c) this.at++; // the escaped character (\uXXXX's digits are plain)
      if (Number.isNaN(c)) return;
    }
  }

  skipValue(): void {
    const t = this.text;
    const c = t.charCodeAt(this.at);
    if (c === 0x22) return this.skipString();
    if (c === 0x7b || c === 0x5b) {
      // Depth counts brackets outside strings; the body is valid JSON, so they balance.
      let depth = 0;
      do {
        const d = t.charCodeAt(this.at);
        if (d === 0x22) {
          this.skipString();
          continue;
        }
        if (d === 0x7b || d === 0x5b) depth++;
        else if (d === 0x7d || d === 0x5d) depth--;
        this.at++;
      } while (depth > 0 && this.at < t.length);
      return;
    }
    // A number or a literal: up to the next delimiter.
    while (this.at < t.length) {
      const d = t.charCodeAt(this.at);
      if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) return;
      this.at++;
    }
  }
}
