import type { Logger } from '../logger.ts';
import type { CreditMeter } from './credit-meter.ts';
import { delay } from './delay.ts';
import type { DocumentStore, MockDocument } from './document-store.ts';
import type { ParseOutcome } from './process-document.ts';

/**
 * The mock's "processing": after `processingMs` (default 0) a pending document is finished
 * with the outcome process-document.ts decided at upload, its credit is charged, a
 * `deleteAfterParse` document is forgotten, and `onFinished` hears of it (the resthook
 * events). With no processing time the document is finished synchronously, before the
 * upload's answer has left, so a client's next read sees it ready without a race.
 */

export interface ParseJob {
  document: MockDocument;
  outcome: Exclude<ParseOutcome, { state: 'refused' }>;
  deleteAfterParse: boolean;
}

export interface ParseRunnerOptions {
  store: DocumentStore;
  credits: CreditMeter;
  /** Milliseconds a document stays pending; 0 finishes it at once. */
  processingMs: number;
  /** Aborted when the mock closes: pending documents then stay pending. */
  closed: AbortSignal;
  onFinished(document: MockDocument): void;
  logger: Logger;
}

export interface ParseRunner {
  /** Resolves true once the document is finished, false when the mock closed first. */
  run(job: ParseJob): Promise<boolean>;
}

export function createParseRunner(options: ParseRunnerOptions): ParseRunner {
  const { store, credits, logger } = options;

  function finish({ document, outcome, deleteAfterParse }: ParseJob): void {
    store.finish(document, outcome.state === 'parsed' ? { warnings: outcome.warnings } : outcome, new Date());
    if (outcome.state !== 'rejected') credits.charge();
    if (deleteAfterParse) store.remove(document.meta.identifier);
    logger.debug(
      {
        documentIdentifier: document.meta.identifier,
        outcome: outcome.state,
        errorCode: document.error?.errorCode,
      },
      'mock API finished a document',
    );
    try {
      options.onFinished(document);
    } catch (caught) {
      // A listener's bug must not turn a parsed document into a failed request.
      logger.error({ err: caught }, 'mock API document listener failed');
    }
  }

  return {
    async run(job) {
      if (options.processingMs > 0 && !(await delay(options.processingMs, options.closed))) return false;
      finish(job);
      return true;
    },
  };
}
