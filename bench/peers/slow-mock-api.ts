import { Writable } from 'node:stream';
import { createLogger } from '../../src/logger.ts';
import { createMockApi } from '../../src/mock-api/create-mock-api.ts';

/**
 * The gateway's mock parsing API in this process, answering every upload after `latencyMs`
 * (an injected fault that never runs out), keeping no file bytes; it notes when each upload
 * arrived so the benchmark can time the workers from their first upload to their last.
 */
export interface SlowMockApi {
  readonly url: string;
  readonly apiKey: string;
  /** performance.now() of each upload received, in order. */
  readonly arrivals: readonly number[];
  /** Resolves once `count` uploads have arrived in all. */
  waitForUploads(count: number): Promise<void>;
  close(): Promise<void>;
}

const apiKey = 'bench-upload-key';

export async function startSlowMockApi(latencyMs: number): Promise<SlowMockApi> {
  const mock = createMockApi({
    apiKey,
    logger: createLogger({
      level: 'silent',
      destination: new Writable({ write: (_chunk, _encoding, done) => done() }),
    }),
    retainFileBytes: false,
  });
  const { url } = await mock.start({ host: '127.0.0.1', port: 0 });
  mock.enqueueFault({ latencyMs, times: 'always' });
  const arrivals: number[] = [];
  mock.onUpload(() => {
    arrivals.push(performance.now());
  });
  return {
    url,
    apiKey,
    arrivals,
    async waitForUploads(count) {
      await mock.waitForUploads(count);
    },
    close: () => mock.close(),
  };
}

/**
 * Documents per second between the `from`th arrival (0-based) and the last: the first few
 * are left out, as the workers' start (connections, BullMQ's first fetch) is not their rate.
 */
export function uploadRate(arrivals: readonly number[], from: number): number {
  const first = arrivals[from];
  const last = arrivals.at(-1);
  if (first === undefined || last === undefined || last <= first) return Number.NaN;
  return ((arrivals.length - 1 - from) * 1000) / (last - first);
}
