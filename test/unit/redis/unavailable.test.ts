import { describe, expect, it } from 'vitest';
import { isRedisUnavailable } from '../../../src/redis/unavailable.ts';

/** ioredis's error classes by the names it gives them (redis-errors' ReplyError, its own MaxRetriesPerRequestError). */
const named = (name: string, message: string): Error => Object.assign(new Error(message), { name });
const reply = (message: string): Error => named('ReplyError', message);
const withCode = (message: string, code: string): Error => Object.assign(new Error(message), { code });

describe('isRedisUnavailable', () => {
  it.each([
    {
      name: 'no connection and no offline queue',
      err: new Error("Stream isn't writeable and enableOfflineQueue options is false"),
      unavailable: true,
    },
    {
      name: 'connection closed under the command',
      err: new Error('Connection is closed.'),
      unavailable: true,
    },
    { name: 'command timeout', err: new Error('Command timed out'), unavailable: true },
    {
      name: 'retries per request spent',
      err: named('MaxRetriesPerRequestError', 'Reached the max retries per request limit (which is 1).'),
      unavailable: true,
    },
    {
      name: 'connection refused',
      err: withCode('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED'),
      unavailable: true,
    },
    { name: 'connection reset', err: withCode('read ECONNRESET', 'ECONNRESET'), unavailable: true },
    {
      name: 'loading its data after a restart',
      err: reply('LOADING Redis is loading the dataset in memory'),
      unavailable: true,
    },
    {
      name: 'a replica until failover completes',
      err: reply("READONLY You can't write against a read only replica."),
      unavailable: true,
    },
    {
      name: 'out of memory: refused on its merits',
      err: reply('OOM command not allowed when used memory > maxmemory'),
      unavailable: false,
    },
    {
      name: 'wrong type: a bug, not an outage',
      err: reply('WRONGTYPE Operation against a key holding the wrong kind of value'),
      unavailable: false,
    },
    { name: 'a script error', err: reply('ERR Error running script'), unavailable: false },
    {
      name: 'an error of the caller',
      err: new TypeError("Cannot read properties of undefined (reading 'x')"),
      unavailable: false,
    },
    { name: 'not an Error', err: 'Connection is closed.', unavailable: false },
  ])('$name → $unavailable', ({ err, unavailable }) => {
    expect(isRedisUnavailable(err)).toBe(unavailable);
  });
});
