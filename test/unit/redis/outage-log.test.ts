import { describe, expect, it } from 'vitest';
import { LogSink } from '../../../harness/gateway-harness.ts';
import { createLogger } from '../../../src/logger.ts';
import { createRedisOutageLog } from '../../../src/redis/outage-log.ts';

const refused = new Error('connect ECONNREFUSED 127.0.0.1:6380');

function outageLog() {
  const sink = new LogSink();
  let clock = 1_000_000;
  const at = (ms: number) => {
    clock = 1_000_000 + ms;
  };
  const lines = () => sink.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  const logger = createLogger({ level: 'info', destination: sink });
  return { outage: createRedisOutageLog({ logger, now: () => clock }), at, lines };
}

describe('Redis outage log', () => {
  it('says when the outage starts, then at most once a minute with counts, and when it ends', () => {
    const { outage, at, lines } = outageLog();
    outage.lost('intake', refused);
    outage.lost('worker', refused);
    outage.lost('completion', refused);
    expect(lines().map((line) => line.msg)).toEqual(['Redis unavailable']);
    expect(lines()[0]).toMatchObject({ level: 40, connection: 'intake', reason: refused.message });

    at(10_000);
    outage.countRefused();
    outage.countRefused();
    expect(outage.absorbs(new Error("Stream isn't writeable and enableOfflineQueue options is false"))).toBe(
      true,
    );
    outage.lost('intake', refused);
    at(59_999);
    outage.lost('intake', refused);
    expect(lines()).toHaveLength(1);

    at(60_000);
    outage.countRefused();
    expect(lines()[1]).toMatchObject({
      level: 40,
      msg: 'Redis still unavailable',
      downForMs: 60_000,
      refusedTransactions: 3,
      failedCommands: 1,
      failedReconnects: 2,
    });
    at(90_000);
    outage.countRefused();
    expect(lines()).toHaveLength(2);

    outage.ready('intake');
    outage.ready('worker');
    expect(lines()).toHaveLength(2);
    at(95_000);
    outage.ready('completion');
    expect(lines()[2]).toMatchObject({
      level: 30,
      msg: 'Redis available again',
      downForMs: 95_000,
      refusedTransactions: 4,
    });
    expect(lines()).toHaveLength(3);
  });

  it('counts nothing and absorbs no error while Redis is there', () => {
    const { outage, lines } = outageLog();
    outage.countRefused();
    expect(outage.absorbs(refused)).toBe(false);
    outage.ready('intake');
    expect(lines()).toEqual([]);
  });

  it('absorbs Redis-away errors for a few seconds after the outage ends, then leaves them to be logged', () => {
    const { outage, at, lines } = outageLog();
    outage.lost('worker', refused);
    at(5_000);
    outage.ready('worker');
    const blockingConnectionRefused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6380'), {
      code: 'ECONNREFUSED',
    });
    at(14_999);
    expect(outage.absorbs(blockingConnectionRefused)).toBe(true);
    expect(outage.absorbs(new Error('could not renew lock for job 1'))).toBe(false);
    // Still failing 10 s after the first of these while the watched connections have Redis.
    at(20_000);
    expect(outage.absorbs(blockingConnectionRefused)).toBe(true);
    at(25_000);
    expect(outage.absorbs(blockingConnectionRefused)).toBe(false);
    expect(lines().map((line) => line.msg)).toEqual(['Redis unavailable', 'Redis available again']);
  });

  it('absorbs Redis-away errors a BullMQ connection reports before the watched ones, for a few seconds', () => {
    const { outage, at, lines } = outageLog();
    const refusedNow = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6380'), {
      code: 'ECONNREFUSED',
    });
    expect(outage.absorbs(refusedNow)).toBe(true);
    at(9_000);
    expect(outage.absorbs(refusedNow)).toBe(true);
    // Still failing 10 s on while no watched connection lost Redis: each is the caller's to log.
    at(18_000);
    expect(outage.absorbs(refusedNow)).toBe(false);
    // A quiet spell, then a new blip: absorbed again.
    at(40_000);
    expect(outage.absorbs(refusedNow)).toBe(true);
    expect(lines()).toEqual([]);
  });

  it('leaves errors that are not Redis being away to their listener, even during an outage', () => {
    const { outage } = outageLog();
    outage.lost('worker', refused);
    expect(outage.absorbs(new Error('could not renew lock for job 1'))).toBe(false);
  });
});
