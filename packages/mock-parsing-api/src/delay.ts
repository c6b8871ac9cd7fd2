import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Waits `ms` milliseconds unless `signal` aborts first (the mock is closing). Resolves true
 * when the time passed, false when it was cut short, so callers branch instead of catching
 * an AbortError. The mock's injected latency, processing time and resthook retry pauses all
 * wait through it, and close() ends every one of them at once.
 */
export async function delay(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  if (ms <= 0) return true;
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch (caught) {
    if (signal.aborted) return false;
    throw caught;
  }
}
