/**
 * The settings a running process takes again without a restart (SIGHUP): one object that the
 * composition root replaces whole, and that every component which reloads reads through, so
 * no component keeps its own copy to be patched, and all of them see the same generation.
 */
export interface LiveSettings<T> {
  /** The settings in force now. */
  current(): T;
  /**
   * Puts `next` in force, then tells each listener, in the order they subscribed. Every
   * listener is called even when one throws; their errors are thrown afterwards, together.
   */
  replace(next: T): void;
  /** Calls `listener` after each replace; returns the unsubscribe. */
  onChange(listener: (next: T, previous: T) => void): () => void;
  /**
   * A value computed from the settings, e.g. an index of them: computed at its first read
   * after each replace, then kept, so readers on a hot path pay for it once per reload.
   */
  derive<U>(compute: (settings: T) => U): () => U;
}

export function createLiveSettings<T>(initial: T): LiveSettings<T> {
  let settings = initial;
  const listeners = new Set<(next: T, previous: T) => void>();
  return {
    current: () => settings,
    replace(next) {
      const previous = settings;
      settings = next;
      const errors: unknown[] = [];
      for (const listener of [...listeners]) {
        try {
          listener(next, previous);
        } catch (err) {
          errors.push(err);
        }
      }
      if (errors.length > 0) throw new AggregateError(errors, 'a listener failed to apply the new settings');
    },
    onChange(listener) {
      const own = (next: T, previous: T) => listener(next, previous);
      listeners.add(own);
      return () => {
        listeners.delete(own);
      };
    },
    derive<U>(compute: (settings: T) => U) {
      let cached: { from: T; value: U } | undefined;
      return () => {
        if (cached === undefined || cached.from !== settings)
          cached = { from: settings, value: compute(settings) };
        return cached.value;
      };
    },
  };
}
