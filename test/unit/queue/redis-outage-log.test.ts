import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/logger.ts';
import { createRedisOutageLog } from '../../../src/queue/redis-outage-log.ts';
import { LogSink } from '../../support/gateway-harness.ts';

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

  it('leaves errors that are not Redis being away to their listener, even during an outage', () => {
    const { outage } = outageLog();
    outage.lost('worker', refused);
    expect(outage.absorbs(new Error('could not renew lock for job 1'))).toBe(false);
  });
});
