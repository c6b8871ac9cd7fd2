import { describe, expect, it } from 'vitest';
import { redisTarget } from '../../../src/redis/connections.ts';

describe('redisTarget', () => {
  const none = { sentinels: [], sentinelName: 'mymaster', cluster: [] };

  it.each([
    { label: 'one Redis', redis: none, target: 'redis://h:6379' },
    {
      label: 'Sentinels',
      redis: { ...none, sentinels: ['s1:26379', 's2:26380'] },
      target: {
        url: 'redis://h:6379',
        sentinels: [
          { host: 's1', port: 26379 },
          { host: 's2', port: 26380 },
        ],
        name: 'mymaster',
      },
    },
    {
      label: 'a cluster',
      redis: { ...none, cluster: ['10.0.0.1:7000', 'node-b:7001'] },
      target: {
        url: 'redis://h:6379',
        cluster: [
          { host: '10.0.0.1', port: 7000 },
          { host: 'node-b', port: 7001 },
        ],
      },
    },
  ])('describes $label', ({ redis, target }) => {
    expect(redisTarget('redis://h:6379', redis)).toEqual(target);
  });
});
