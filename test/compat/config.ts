// The runner's two checked-in settings: the documented exceptions (fixture -> reason, at most
// three, so that a gap is fixed rather than excused) and the floor (the fewest fixtures that
// must pass; it only goes up).

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const EXCEPTIONS_FILE = join(here, 'exceptions.json');
export const FLOOR_FILE = join(here, 'floor.json');
export const MAX_EXCEPTIONS = 3;

export class ConfigError extends Error {
  constructor(
    readonly file: string,
    problem: string,
  ) {
    super(`${file}: ${problem}`);
    this.name = 'ConfigError';
  }
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ConfigError(file, (e as Error).message);
  }
}

/** Fixture name (path below tests/) -> why it cannot pass. Names must be known fixtures. */
export function loadExceptions(known: readonly string[], file = EXCEPTIONS_FILE): Map<string, string> {
  const raw = readJson(file);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ConfigError(file, 'expected an object: { "<method>/<file>.io": "reason" }');
  const out = new Map<string, string>();
  for (const [name, reason] of Object.entries(raw)) {
    if (typeof reason !== 'string' || reason.trim() === '') throw new ConfigError(file, `${name}: the reason must be a non-empty string`);
    if (!known.includes(name)) throw new ConfigError(file, `${name} is not a fixture of the kit`);
    out.set(name, reason);
  }
  if (out.size > MAX_EXCEPTIONS) throw new ConfigError(file, `${out.size} exceptions; at most ${MAX_EXCEPTIONS} are allowed`);
  return out;
}

export function loadFloor(file = FLOOR_FILE): number {
  const raw = readJson(file) as { minPassing?: unknown };
  const n = raw?.minPassing;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new ConfigError(file, 'expected { "minPassing": <integer >= 0> }');
  return n;
}

/** Writes a higher floor; never lowers it. Returns the floor now in the file. */
export function raiseFloor(passing: number, file = FLOOR_FILE): number {
  const current = loadFloor(file);
  if (passing <= current) return current;
  writeFileSync(file, `${JSON.stringify({ minPassing: passing }, null, 2)}\n`);
  return passing;
}
