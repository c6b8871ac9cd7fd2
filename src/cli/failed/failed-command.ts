import type { Writable } from 'node:stream';
import type { FailedUploads } from '../../uploader/failed-uploads.ts';

export type FailedCommand =
  | { action: 'list'; json: boolean }
  | { action: 'retry'; jobIds: readonly string[] | 'all' };

/**
 * `ingest-gateway failed list [--json]` and `ingest-gateway failed retry ID... | --all`.
 * Returns the exit code: 0 done, 1 some job could not be retried.
 */
export async function runFailedCommand(
  command: FailedCommand,
  failed: FailedUploads,
  out: Writable,
  onProgress?: (done: number, total: number) => void,
): Promise<number> {
  if (command.action === 'list') {
    const uploads = await failed.list();
    if (command.json) {
      out.write(`${JSON.stringify(uploads, null, 2)}\n`);
      return 0;
    }
    if (uploads.length === 0) {
      out.write('no failed uploads\n');
      return 0;
    }
    out.write('job\tworkspace\tfile\tattempts\tfailed at\tretryable\treason\n');
    for (const upload of uploads) {
      const cells = [
        upload.jobId,
        upload.workspace,
        upload.fileName,
        String(upload.attempts),
        upload.failedAt ?? '-',
        upload.retryable ? 'yes' : 'no (attachment expired)',
        upload.reason,
      ];
      out.write(`${cells.join('\t')}\n`);
    }
    return 0;
  }
  const outcome = await failed.retry(command.jobIds, onProgress);
  for (const jobId of outcome.retried) out.write(`retried ${jobId}\n`);
  for (const { jobId, reason } of outcome.refused) out.write(`not retried ${jobId}: ${reason}\n`);
  if (outcome.retried.length === 0 && outcome.refused.length === 0) out.write('no failed uploads\n');
  return outcome.refused.length > 0 ? 1 : 0;
}
