import { describe, expect, it } from 'vitest';
import { createLiveSettings } from '../../src/live-settings.ts';

interface Settings {
  apiKey: string;
  workspaces: string[];
}

describe('live settings', () => {
  it('reads the initial settings, then each replacement', () => {
    const live = createLiveSettings<Settings>({ apiKey: 'old', workspaces: ['a'] });
    expect(live.current().apiKey).toBe('old');
    live.replace({ apiKey: 'new', workspaces: ['a', 'b'] });
    expect(live.current()).toEqual({ apiKey: 'new', workspaces: ['a', 'b'] });
  });

  it('tells each listener the new and the previous settings, after they are in force', () => {
    const live = createLiveSettings<Settings>({ apiKey: 'old', workspaces: [] });
    const seen: string[] = [];
    live.onChange((next, previous) =>
      seen.push(`${previous.apiKey}->${next.apiKey}:${live.current().apiKey}`),
    );
    live.replace({ apiKey: 'new', workspaces: [] });
    expect(seen).toEqual(['old->new:new']);
  });

  it('calls every listener when one throws, then throws what failed', () => {
    const live = createLiveSettings<Settings>({ apiKey: 'old', workspaces: [] });
    const called: string[] = [];
    live.onChange(() => {
      called.push('first');
      throw new Error('client refused');
    });
    live.onChange(() => called.push('second'));
    expect(() => live.replace({ apiKey: 'new', workspaces: [] })).toThrow(AggregateError);
    expect(called).toEqual(['first', 'second']);
    expect(live.current().apiKey).toBe('new');
  });

  it('stops calling a listener once unsubscribed', () => {
    const live = createLiveSettings<Settings>({ apiKey: 'a', workspaces: [] });
    const seen: string[] = [];
    const unsubscribe = live.onChange((next) => seen.push(next.apiKey));
    live.replace({ apiKey: 'b', workspaces: [] });
    unsubscribe();
    live.replace({ apiKey: 'c', workspaces: [] });
    expect(seen).toEqual(['b']);
  });

  it('computes a derived value once per replacement, at its first read', () => {
    const live = createLiveSettings<Settings>({ apiKey: 'k', workspaces: ['a'] });
    let computations = 0;
    const index = live.derive((settings) => {
      computations++;
      return new Set(settings.workspaces);
    });
    expect(computations).toBe(0);
    expect(index().has('a')).toBe(true);
    expect(index()).toBe(index());
    expect(computations).toBe(1);
    live.replace({ apiKey: 'k', workspaces: ['b'] });
    expect(index().has('a')).toBe(false);
    expect(index().has('b')).toBe(true);
    expect(computations).toBe(2);
  });
});
