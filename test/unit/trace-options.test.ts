// The tracer options' validation: Go durations as geth's time.ParseDuration reads them,
// and the options object reduced to what the addon takes.

import { describe, expect, it } from 'vitest';
import { RpcError } from '../../src/errors/index.js';
import { goDurationMs, traceCallOptions, traceOptions } from '../../src/validation/trace.js';

const invalid = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(RpcError);
    expect((e as RpcError).code).toBe(-32602);
    return (e as RpcError).message;
  }
  throw new Error('expected an invalid-params error');
};

describe('Go durations', () => {
  it('reads what time.ParseDuration reads, in whole milliseconds rounded up', () => {
    expect(goDurationMs('5s', 'p')).toBe(5000);
    expect(goDurationMs('500ms', 'p')).toBe(500);
    expect(goDurationMs('1m30s', 'p')).toBe(90_000);
    expect(goDurationMs('1.5h', 'p')).toBe(5_400_000);
    expect(goDurationMs('.5s', 'p')).toBe(500);
    expect(goDurationMs('1500us', 'p')).toBe(2);
    expect(goDurationMs('1500µs', 'p')).toBe(2);
    expect(goDurationMs('10ns', 'p')).toBe(1);
    expect(goDurationMs('0', 'p')).toBe(0);
    expect(goDurationMs('+2s', 'p')).toBe(2000);
  });

  it('refuses what it does not', () => {
    for (const bad of ['5', '', 's', '5 s', '5sec', '1m30', '.s', 'abc']) expect(invalid(() => goDurationMs(bad, 'p'))).toMatch(/invalid timeout/);
    expect(invalid(() => goDurationMs('-1s', 'p'))).toMatch(/must not be negative/);
    expect(invalid(() => goDurationMs(5, 'p'))).toMatch(/duration string/);
  });
});

describe('tracer options', () => {
  it('keeps the struct logger flags, the tracer, its known config members, and the timeout in ms', () => {
    expect(traceOptions(undefined, 'p')).toEqual({});
    expect(traceOptions({ enableMemory: true, disableStack: false, limit: 10, timeout: '2s', unknown: 1 }, 'p')).toEqual({
      enableMemory: true,
      disableStack: false,
      limit: 10,
      timeoutMs: 2000,
    });
    expect(traceOptions({ tracer: 'callTracer', tracerConfig: { withLog: true, onlyTopCall: false, other: 1 } }, 'p')).toEqual({
      tracer: 'callTracer',
      tracerConfig: { withLog: true, onlyTopCall: false },
    });
    expect(traceOptions({ tracer: 'prestateTracer', tracerConfig: { diffMode: true } }, 'p')).toEqual({
      tracer: 'prestateTracer',
      tracerConfig: { diffMode: true },
    });
  });

  it('refuses malformed members, naming them', () => {
    expect(invalid(() => traceOptions('callTracer', 'invalid argument 1'))).toMatch(/^invalid argument 1: tracer options must be an object/);
    expect(invalid(() => traceOptions({ limit: -1 }, 'a'))).toMatch(/^a\.limit: /);
    expect(invalid(() => traceOptions({ limit: 1.5 }, 'a'))).toMatch(/^a\.limit: /);
    expect(invalid(() => traceOptions({ tracer: 1 }, 'a'))).toMatch(/^a\.tracer: /);
    expect(invalid(() => traceOptions({ tracer: 'callTracer', tracerConfig: { withLog: 'yes' } }, 'a'))).toMatch(/^a\.tracerConfig\.withLog: /);
    expect(invalid(() => traceOptions({ enableReturnData: 'true' }, 'a'))).toMatch(/^a\.enableReturnData: /);
  });

  it('debug_traceCall adds overrides and txIndex', () => {
    const { options, extra } = traceCallOptions(
      {
        tracer: 'callTracer',
        txIndex: '0x2',
        stateOverrides: { '0x00000000000000000000000000000000000000aa': { balance: '0x1' } },
        blockOverrides: { number: '0x10' },
      },
      'p',
    );
    expect(options).toEqual({ tracer: 'callTracer' });
    expect(extra).toEqual({
      txIndex: '0x2',
      stateOverrides: { '0x00000000000000000000000000000000000000aa': { balance: '0x1' } },
      blockOverrides: { number: '0x10' },
    });
    expect(invalid(() => traceCallOptions({ txIndex: 2 }, 'a'))).toMatch(/^a\.txIndex: /);
  });
});
