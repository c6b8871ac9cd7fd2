import type { FailedUpload } from '../../uploader/failed-uploads.ts';
import { type Html, html } from './html.ts';
import { page, time } from './layout.ts';

/** The outcome of the last retry, carried over the redirect after the form. */
export interface RetryNotice {
  retried: number;
  refused: number;
}

/** GET /failed: every failed upload with its reason, and retry for one or all. */
export function failedUploadsPage(
  uploads: readonly FailedUpload[],
  csrf: string,
  signedIn: boolean,
  notice: RetryNotice | null,
): Html {
  const retryable = uploads.filter((upload) => upload.retryable).length;
  const body = html`<h1>Failed uploads</h1>
    ${notice === null ? null : retryNotice(notice)}
    ${
      uploads.length === 0
        ? html`<p>No upload has failed.</p>`
        : html`<form method="post" action="/failed/retry" class="retry-all">
        <input type="hidden" name="csrf" value="${csrf}">
        <input type="hidden" name="all" value="1">
        <button type="submit"${retryable === 0 ? html` disabled` : null}>Retry all (${retryable})</button>
      </form>
      <div class="table-wrap"><table class="failed">
        <caption class="visually-hidden">Failed uploads</caption>
        <thead><tr><th scope="col">File</th><th scope="col">Message</th><th scope="col">Workspace</th>
          <th scope="col">Reason</th><th scope="col">Attempts</th><th scope="col">Failed at</th><th scope="col">Retry</th></tr></thead>
        <tbody>${uploads.map((upload) => row(upload, csrf))}</tbody>
      </table></div>`
    }`;
  return page({ title: 'Failed uploads', section: 'failed', logoutCsrf: signedIn ? csrf : null, body });
}

function row(upload: FailedUpload, csrf: string): Html {
  return html`<tr data-job="${upload.jobId}">
    <th scope="row" class="file-name">${upload.fileName}</th>
    <td data-label="Message"><a href="/messages/${encodeURIComponent(upload.messageId)}" class="queue-id">${upload.messageId}</a> #${upload.entry}</td>
    <td data-label="Workspace">${upload.workspace}</td>
    <td data-label="Reason" class="reason">${upload.reason}</td>
    <td data-label="Attempts">${upload.attempts}</td>
    <td data-label="Failed at">${time(upload.failedAt)}</td>
    <td data-label="Retry">${
      upload.retryable
        ? html`<form method="post" action="/failed/retry" class="inline">
        <input type="hidden" name="csrf" value="${csrf}">
        <input type="hidden" name="jobId" value="${upload.jobId}">
        <button type="submit" aria-label="Retry the upload of ${upload.fileName}">Retry</button>
      </form>`
        : html`<span class="muted">Expired: the attachment is no longer stored</span>`
    }</td>
  </tr>`;
}

function retryNotice(notice: RetryNotice): Html {
  return html`<div role="status" class="notice">
    <p>${notice.retried} upload(s) back in the queue.${notice.refused > 0 ? ` ${notice.refused} not retried: no longer failed, or their attachment expired.` : null}</p>
  </div>`;
}
