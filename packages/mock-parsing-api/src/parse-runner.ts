import type { Logger } from 'pino';
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
  /**
   * Pages to split it into (a workspace with a `documentSplitter`, a PDF of more than one
   * page); absent or 0: not split. When the document is finished, one child document per page
   * is created, pending, and each is processed as an upload is (after `processingMs`).
   */
  splitPages?: number;
}

export interface ParseRunnerOptions {
  store: DocumentStore;
  credits: CreditMeter;
  /** Milliseconds a document stays pending; 0 finishes it at once. */
  processingMs: number;
  /** Aborted when the mock closes: pending documents then stay pending. */
  closed: AbortSignal;
  /** `state`: how it finished (a rejection is a duplicate or a file of the wrong type). */
  onFinished(document: MockDocument, state: ParseJob['outcome']['state']): void;
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
      options.onFinished(document, outcome.state);
    } catch (caught) {
      // A listener's bug must not turn a parsed document into a failed request.
      logger.error({ err: caught }, 'mock API document listener failed');
    }
  }

  /** The pending children of a split document, each processed on its own. */
  function split(parent: MockDocument, pages: number): ParseJob[] {
    const { meta } = parent;
    const children: ParseJob[] = [];
    for (let page = 1; page <= pages; page++) {
      const child = store.create(
        {
          fileName:
            meta.fileName === null ? null : `${meta.fileName.replace(/\.pdf$/i, '')}-page-${page}.pdf`,
          customIdentifier: null,
          workspace: meta.workspace?.identifier ?? null,
          collection: meta.collection?.identifier ?? null,
          documentType: meta.documentType,
          language: meta.language,
          expiryTime: meta.expiryTime,
          sha256: null,
          parentDocument: { identifier: meta.identifier, customIdentifier: meta.customIdentifier },
        },
        new Date(),
      );
      meta.childDocuments.push({ identifier: child.meta.identifier, customIdentifier: null });
      children.push({ document: child, outcome: { state: 'parsed', warnings: [] }, deleteAfterParse: false });
    }
    return children;
  }

  async function run(job: ParseJob): Promise<boolean> {
    if (options.processingMs > 0 && !(await delay(options.processingMs, options.closed))) return false;
    const children =
      job.splitPages && job.outcome.state === 'parsed' ? split(job.document, job.splitPages) : [];
    finish(job);
    for (const child of children) {
      run(child).catch((caught: unknown) =>
        logger.error(
          { err: caught, documentIdentifier: child.document.meta.identifier },
          'mock API split failed',
        ),
      );
    }
    return true;
  }

  return { run };
}
