import { asError } from './errors.ts';
import type { Logger } from './logger.ts';

/**
 * The one shutdown path of a process (docs/architecture.md, "Lifecycle"): components register how they
 * close as they start, and `close()` undoes them in reverse order (SMTP intake before the
 * producer, the workers before Redis), each step once, every step even when one fails,
 * within one deadline.
 */
export interface Lifecycle {
  /** Registers how to undo what was just started. Registered while closing, it is closed too. */
  onClose(name: string, close: () => unknown): void;
  /**
   * Registers the component's close, then starts it: a component that fails half-way through
   * its start is still closed. Once closing has begun, the component is closed, not started.
   */
  start<T>(name: string, component: Startable<T>): Promise<T>;
  /**
   * Runs every registered step, last registered first, and resolves once they have ended or
   * the deadline has passed, whichever is first. Never rejects; idempotent (the same promise).
   */
  close(): Promise<ShutdownResult>;
  /** Whether close() has been called. */
  readonly closing: boolean;
}

export interface Startable<T> {
  start(): Promise<T>;
  close(): Promise<unknown>;
}

export interface ShutdownResult {
  /** Steps that threw or rejected (each logged with its error). */
  readonly failed: readonly string[];
  /** Steps still running, or not yet reached, when the deadline passed. */
  readonly unfinished: readonly string[];
}

export interface LifecycleOptions {
  logger: Logger;
  /**
   * Milliseconds close() may take in all. Past it close() resolves, and the steps left are
   * abandoned: the process is about to exit, and what was in flight is recovered from Redis.
   */
  deadline: number;
}

interface Step {
  name: string;
  close: () => unknown;
}

/** Thrown by start() once closing has begun: the component was not started. */
export class ShuttingDownError extends Error {
  constructor(name: string) {
    super(`${name} not started: shutting down`);
    this.name = 'ShuttingDownError';
  }
}

export function createLifecycle(options: LifecycleOptions): Lifecycle {
  const { logger, deadline } = options;
  const steps: Step[] = [];
  const failed: string[] = [];
  let running: Step | undefined;
  let closing: Promise<ShutdownResult> | undefined;
  let drained = false;

  async function runStep(step: Step): Promise<void> {
    try {
      await step.close();
      logger.debug({ step: step.name }, 'shutdown step done');
    } catch (err) {
      failed.push(step.name);
      logger.error({ err: asError(err), step: step.name }, 'shutdown step failed');
    }
  }

  async function drain(): Promise<void> {
    // Popped one at a time, so a step registered while an earlier one closes runs too.
    for (let step = steps.pop(); step !== undefined; step = steps.pop()) {
      running = step;
      await runStep(step);
    }
    running = undefined;
    drained = true;
  }

  function onClose(name: string, close: Step['close']): void {
    const step = { name, close };
    if (!drained) {
      steps.push(step);
      return;
    }
    // Registered after every step ran (a start that raced the shutdown): close it at once.
    void runStep(step);
  }

  async function close(): Promise<ShutdownResult> {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<'deadline'>((resolve) => {
      timer = setTimeout(() => resolve('deadline'), deadline);
    });
    const ended = await Promise.race([drain().then(() => 'done' as const), bound]);
    clearTimeout(timer);
    if (ended === 'done') return { failed: [...failed], unfinished: [] };
    const unfinished = [...(running ? [running.name] : []), ...steps.map((step) => step.name).reverse()];
    logger.warn({ ms: deadline, unfinished }, 'shutdown deadline passed; the steps left are abandoned');
    return { failed: [...failed], unfinished };
  }

  return {
    onClose,
    async start(name, component) {
      onClose(name, () => component.close());
      if (closing) throw new ShuttingDownError(name);
      return component.start();
    },
    close() {
      closing ??= close();
      return closing;
    },
    get closing() {
      return closing !== undefined;
    },
  };
}
