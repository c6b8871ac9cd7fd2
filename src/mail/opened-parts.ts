import type { PartStore, PartWriter } from './part-store.ts';

/** The parts one walk has opened in the store, so that a failed walk discards them all. */
export interface OpenedParts {
  /** The store to walk with: it remembers every writer it opens. */
  readonly store: PartStore;
  /** Discard every part opened, ended ones too: after a failure they are of no use. Never rejects. */
  discardAll(): Promise<void>;
}

/** Record every writer opened through `store`; each one's discard() runs once however often it is called. */
export function trackOpenedParts(store: PartStore): OpenedParts {
  const writers: PartWriter[] = [];
  return {
    store: {
      recordSpan: (index, span) => store.recordSpan(index, span),
      openPart(index, purpose) {
        const writer = store.openPart(index, purpose);
        let discarding: Promise<void> | null = null;
        const tracked: PartWriter = {
          write: (chunk) => writer.write(chunk),
          end: () => writer.end(),
          discard: () => {
            discarding ??= writer.discard();
            return discarding;
          },
        };
        writers.push(tracked);
        return tracked;
      },
    },
    async discardAll() {
      await Promise.allSettled(writers.map((writer) => writer.discard()));
    },
  };
}
