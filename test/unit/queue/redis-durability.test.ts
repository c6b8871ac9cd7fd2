import { describe, expect, it } from 'vitest';
import { assessDurability, type RedisFacts, supportsWaitAof } from '../../../src/queue/redis-durability.ts';

const facts = (config: Record<string, string> | null, version = '7.2.4'): RedisFacts => ({ config, version });
const safe = { 'maxmemory-policy': 'noeviction', appendonly: 'yes', appendfsync: 'everysec' };
const defaults = { allowEviction: false, waitAof: false };

describe('assessDurability', () => {
  it('starts without warnings on noeviction with AOF everysec', () => {
    const { durability, refusal } = assessDurability(facts(safe), defaults);
    expect(refusal).toBeNull();
    expect(durability).toMatchObject({
      aof: 'everysec',
      maxmemoryPolicy: 'noeviction',
      waitAof: false,
      warnings: [],
    });
  });

  it.each(['allkeys-lru', 'volatile-ttl', 'allkeys-random'])(
    'refuses to start on maxmemory-policy %s',
    (policy) => {
      const { refusal } = assessDurability(facts({ ...safe, 'maxmemory-policy': policy }), defaults);
      expect(refusal).toMatch(new RegExp(`maxmemory-policy is ${policy}.*redis\\.allowEviction`));
    },
  );

  it('starts with a warning when eviction is explicitly allowed', () => {
    const { durability, refusal } = assessDurability(facts({ ...safe, 'maxmemory-policy': 'allkeys-lru' }), {
      ...defaults,
      allowEviction: true,
    });
    expect(refusal).toBeNull();
    expect(durability.warnings).toEqual([expect.stringContaining('allowed by redis.allowEviction')]);
  });

  it.each([
    [{ appendonly: 'yes', appendfsync: 'always' }, 'always'],
    [{ appendonly: 'yes', appendfsync: 'everysec' }, 'everysec'],
    [{ appendonly: 'yes', appendfsync: 'no' }, 'no'],
    [{ appendonly: 'no', appendfsync: 'everysec' }, 'off'],
  ])('reports AOF %o as %s', (aofSettings, aof) => {
    expect(assessDurability(facts({ ...safe, ...aofSettings }), defaults).durability.aof).toBe(aof);
  });

  it('warns that AOF off loses accepted mail on restart', () => {
    const { durability } = assessDurability(facts({ ...safe, appendonly: 'no' }), defaults);
    expect(durability.warnings).toEqual([expect.stringMatching(/^AOF is off/)]);
  });

  it('waits for the AOF on Redis 7.2 and later', () => {
    expect(assessDurability(facts(safe, '7.2.0'), { ...defaults, waitAof: true }).durability.waitAof).toBe(
      true,
    );
  });

  it('says at start that an older Redis has no WAITAOF', () => {
    const { durability, refusal } = assessDurability(facts(safe, '7.0.15'), { ...defaults, waitAof: true });
    expect(refusal).toBeNull();
    expect(durability.waitAof).toBe(false);
    expect(durability.warnings).toEqual([expect.stringContaining('Redis 7.0.15 has no WAITAOF')]);
  });

  it('does not guess when CONFIG is not allowed', () => {
    const { durability, refusal } = assessDurability(facts(null), defaults);
    expect(refusal).toBeNull();
    expect(durability).toMatchObject({ aof: 'unknown', maxmemoryPolicy: 'unknown' });
    expect(durability.warnings[0]).toMatch(/CONFIG GET is not allowed/);
  });

  it.each([
    ['7.0.15', false],
    ['7.2.0', true],
    ['7.4.1', true],
    ['8.0.0', true],
    ['6.2.14', false],
    ['unknown', false],
  ])('supportsWaitAof(%s) is %s', (version, expected) => {
    expect(supportsWaitAof(version)).toBe(expected);
  });
});

describe('assessDurability with waitAof and AOF off', () => {
  it('does not wait for an fsync that cannot come, and says so', () => {
    const { durability } = assessDurability(
      {
        config: { 'maxmemory-policy': 'noeviction', appendonly: 'no', appendfsync: 'everysec' },
        version: '7.2.4',
      },
      { allowEviction: false, waitAof: true },
    );
    expect(durability.waitAof).toBe(false);
    expect(durability.warnings).toEqual(
      expect.arrayContaining([expect.stringContaining('redis.waitAof needs AOF on')]),
    );
  });
});
