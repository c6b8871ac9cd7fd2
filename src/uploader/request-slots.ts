/**
 * The parsing-API requests one worker process has in flight at once: `upload.concurrency`.
 * The BullMQ worker runs a few more jobs than that (jobsInFlight), so that while some of them
 * do their Redis work (reading the record and the bytes, marking the entry uploading, the
 * settlement, BullMQ's completion and its fetch of the next job), as many requests as allowed
 * are still in flight. With one job per request, each slot idled through that work between
 * two uploads: about a tenth of a 50 ms upload on a 2-core machine. First come, first served.
 */
export interface RequestSlots {
  /** Runs `request` once a slot is free, and holds the slot until it settles. */
  run<T>(request: () => Promise<T>): Promise<T>;
}

export function createRequestSlots(limit: number): RequestSlots {
  let free = limit;
  const waiting: Array<() => void> = [];
  return {
    async run(request) {
      if (free > 0) free--;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      try {
        return await request();
      } finally {
        // The slot passes straight to the next in line, or becomes free.
        const next = waiting.shift();
        if (next) next();
        else free++;
      }
    },
  };
}

/**
 * Jobs a worker runs at once for `concurrency` requests in flight: half as many again, at
 * least one more. The Redis work around each request takes a few ms against the API's tens,
 * but grows on a busy machine: with 8 requests and 10 jobs, 7 to 9% of the request time went
 * unused at a load average of 6 to 7 (2 cores), with 12 jobs 3%, and 16 did no better. Each job
 * waiting for a slot holds its document's bytes.
 */
export function jobsInFlight(concurrency: number): number {
  return concurrency + Math.ceil(concurrency / 2);
}
