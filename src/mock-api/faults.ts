import { z } from 'zod';

/**
 * Faults a test injects so the next `POST /v3/documents` fails the way the real service or
 * the network can: a status (with an optional body and headers, e.g. `Retry-After`) or a
 * dropped connection. They are served first in, first out, one per upload request, before
 * authentication, so a fault always reaches the client that is under test.
 */
export const mockFaultSchema = z.union([
  z.object({ drop: z.literal(true) }).strict(),
  z
    .object({
      status: z.number().int().min(200).max(599),
      /** JSON body; a string is sent as text/plain. Default: the RequestError for the status. */
      body: z.unknown().optional(),
      headers: z.record(z.string(), z.string()).optional(),
    })
    .strict(),
]);

export type MockFault = z.infer<typeof mockFaultSchema>;

export interface FaultQueue {
  enqueue(fault: MockFault): void;
  /** The next fault to serve, removed from the queue; undefined when none is pending. */
  take(): MockFault | undefined;
  readonly pending: number;
}

export function createFaultQueue(): FaultQueue {
  const queue: MockFault[] = [];
  return {
    enqueue(fault) {
      queue.push(mockFaultSchema.parse(fault));
    },
    take() {
      return queue.shift();
    },
    get pending() {
      return queue.length;
    },
  };
}
