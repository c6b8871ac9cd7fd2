import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLifecycle, ShuttingDownError } from '../../src/lifecycle.ts';
import { createLogger } from '../../src/logger.ts';

function setup(deadline = 10_000) {
  const logs = { lines: [] as string[], write: (line: string) => logs.lines.push(line) };
  const lifecycle = createLifecycle({ logger: createLogger({ level: 'info', destination: logs }), deadline });
  const closed: string[] = [];
  const step = (name: string) => () => {
    closed.push(name);
    return Promise.resolve();
  };
  return { lifecycle, logs, closed, step };
}

const never = () => new Promise<void>(() => undefined);

describe('lifecycle', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('closes the steps in reverse order of registration', async () => {
    const { lifecycle, closed, step } = setup();
    lifecycle.onClose('redis', step('redis'));
    lifecycle.onClose('workers', step('workers'));
    lifecycle.onClose('smtp', step('smtp'));
    expect(await lifecycle.close()).toEqual({ failed: [], unfinished: [] });
    expect(closed).toEqual(['smtp', 'workers', 'redis']);
  });

  it('runs each step once however often close() is called, and keeps its promise', async () => {
    const { lifecycle, closed, step } = setup();
    lifecycle.onClose('a', step('a'));
    const first = lifecycle.close();
    const second = lifecycle.close();
    expect(second).toBe(first);
    await first;
    await lifecycle.close();
    expect(closed).toEqual(['a']);
    expect(lifecycle.closing).toBe(true);
  });

  it('attempts every step when one throws or rejects, and logs each failure with its step', async () => {
    const { lifecycle, closed, step, logs } = setup();
    lifecycle.onClose('first', step('first'));
    lifecycle.onClose('rejects', () => Promise.reject(new Error('quit refused')));
    lifecycle.onClose('throws', () => {
      throw new Error('already gone');
    });
    lifecycle.onClose('last', step('last'));
    expect(await lifecycle.close()).toEqual({ failed: ['throws', 'rejects'], unfinished: [] });
    expect(closed).toEqual(['last', 'first']);
    const failures = logs.lines
      .map((line) => JSON.parse(line))
      .filter((e) => e.msg === 'shutdown step failed');
    expect(failures.map((e) => [e.step, e.err.message])).toEqual([
      ['throws', 'already gone'],
      ['rejects', 'quit refused'],
    ]);
  });

  it('resolves at the deadline when a step never ends, naming it and the steps not reached', async () => {
    vi.useFakeTimers();
    const { lifecycle, closed, step, logs } = setup(5000);
    lifecycle.onClose('redis', step('redis'));
    lifecycle.onClose('mock', step('mock'));
    lifecycle.onClose('worker', never);
    lifecycle.onClose('smtp', step('smtp'));
    let result: unknown;
    const closing = lifecycle.close().then((value) => {
      result = value;
    });
    await vi.advanceTimersByTimeAsync(4999);
    expect(result).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    await closing;
    expect(result).toEqual({ failed: [], unfinished: ['worker', 'mock', 'redis'] });
    expect(closed).toEqual(['smtp']);
    expect(logs.lines.some((line) => line.includes('shutdown deadline passed'))).toBe(true);
  });

  it('clears its deadline once every step has ended', async () => {
    vi.useFakeTimers();
    const { lifecycle, step } = setup(5000);
    lifecycle.onClose('a', step('a'));
    await lifecycle.close();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('closes a component whose start failed half-way, and passes the failure on', async () => {
    const { lifecycle, closed } = setup();
    const component = {
      start: () => Promise.reject(new Error('port in use')),
      close: () => {
        closed.push('smtp');
        return Promise.resolve();
      },
    };
    await expect(lifecycle.start('smtp', component)).rejects.toThrow('port in use');
    await lifecycle.close();
    expect(closed).toEqual(['smtp']);
  });

  it('returns what start() returns', async () => {
    const { lifecycle } = setup();
    const started = await lifecycle.start('http', {
      start: () => Promise.resolve({ url: 'http://127.0.0.1:1' }),
      close: () => Promise.resolve(),
    });
    expect(started).toEqual({ url: 'http://127.0.0.1:1' });
  });

  it('does not start a component once closing has begun, and still closes it', async () => {
    const { lifecycle, closed } = setup();
    const started: string[] = [];
    await lifecycle.close();
    const component = {
      start: () => {
        started.push('worker');
        return Promise.resolve();
      },
      close: () => {
        closed.push('worker');
        return Promise.resolve();
      },
    };
    await expect(lifecycle.start('worker', component)).rejects.toBeInstanceOf(ShuttingDownError);
    expect(started).toEqual([]);
    expect(closed).toEqual(['worker']);
  });

  it('closes a step registered while an earlier step is closing', async () => {
    const { lifecycle, closed, step } = setup();
    lifecycle.onClose('redis', step('redis'));
    lifecycle.onClose('gateway', () => {
      closed.push('gateway');
      // A component whose start raced the shutdown registers its close now.
      lifecycle.onClose('late', step('late'));
      return Promise.resolve();
    });
    await lifecycle.close();
    expect(closed).toEqual(['gateway', 'late', 'redis']);
  });
});
