import type { AttachmentEntry, MessageRecord } from '../../record/message-record.ts';
import type { ScanRecord } from '../../scan/scan-record-schema.ts';
import type { SenderAuthentication } from '../../sender/sender-policy.ts';
import { heldActions, messageReplayHint } from './held-actions.ts';
import { type Html, html } from './html.ts';
import { page, size, stateBadge, time } from './layout.ts';
import { attachmentPreview, messageContent } from './message-content.ts';
import type { MessageSource } from './message-source.ts';

export interface MessagePageInput {
  record: MessageRecord;
  /** Per entry: whether its bytes are still stored (they are released once uploaded). */
  stored: ReadonlySet<number>;
  /** The upload job of each failed entry, for its retry button. */
  retryJob: (entry: number) => string;
  /** The session's CSRF token: the retry and logout forms send it back. */
  csrf: string;
  signedIn: boolean;
  /** The stored e-mail: headers, bodies, raw source. */
  source: MessageSource;
}

/**
 * GET /messages/{id}: one message as the gateway saw it: envelope, sender authentication, the
 * scanners' verdicts, the admit decision per workspace, and each attachment with what became of it. console.js
 * redraws the page when /v1/events announces a change of this message.
 */
export function messagePage(input: MessagePageInput): Html {
  const { record } = input;
  const body = html`<article data-live-message="${record.id}">
    <h1>Message <span class="queue-id">${record.id}</span></h1>
    <p class="live-status" role="status" aria-live="polite" data-live-status></p>
    ${record.keptFor === 'postmaster' ? html`<p class="kept" data-kept-for="postmaster"><strong>Kept for the postmaster.</strong> Mail to a postmaster address is stored for the operator to read, never uploaded.</p>` : null}
    <p class="links"><a href="/v1/messages/${record.id}/raw" download>Download the e-mail (.eml)</a>
      · <a href="/v1/messages/${record.id}">Record as JSON</a></p>
    <form method="post" action="/messages/${record.id}/delete" class="inline delete-message">
      <input type="hidden" name="csrf" value="${input.csrf}">
      <button type="submit" class="danger" data-action="delete">Delete this message</button>
    </form>
    <section aria-labelledby="envelope-heading">
      <h2 id="envelope-heading">Envelope</h2>
      <dl class="facts">
        <dt>Subject</dt><dd class="subject">${record.subject ?? html`<span class="muted">(no subject)</span>`}</dd>
        <dt>From (header)</dt><dd>${record.from ?? html`<span class="muted">none</span>`}</dd>
        <dt>MAIL FROM</dt><dd>${record.envelope.mailFrom ?? html`<span class="muted">&lt;&gt; (null sender)</span>`}</dd>
        <dt>RCPT TO</dt><dd>${record.envelope.rcptTo.join(', ')}</dd>
        <dt>Received</dt><dd>${time(record.receivedAt)}</dd>
        <dt>From address</dt><dd>${record.remoteAddress ?? html`<span class="muted">unknown</span>`}</dd>
        <dt>Message-ID</dt><dd>${record.messageId ?? html`<span class="muted">none</span>`}</dd>
        <dt>Size</dt><dd>${size(record.size)}</dd>
        <dt>Status</dt><dd>${record.status}</dd>
      </dl>
    </section>
    ${record.hold && !record.scan ? holdNotice(record, input.csrf) : null}
    <section aria-labelledby="auth-heading">
      <h2 id="auth-heading">Sender authentication</h2>
      ${authentication(record.authentication)}
    </section>
    ${
      record.scan
        ? html`<section aria-labelledby="scan-heading">
      <h2 id="scan-heading">Scanning</h2>
      ${record.hold ? holdNotice(record, input.csrf) : null}
      ${scanFacts(record.scan)}
    </section>`
        : null
    }
    ${messageContent(record.id, input.source)}
    <section aria-labelledby="workspaces-heading">
      <h2 id="workspaces-heading">Allow-list decision per workspace</h2>
      <div class="table-wrap"><table>
        <thead><tr><th scope="col">Workspace</th><th scope="col">Admitted</th><th scope="col">Authentication asked</th><th scope="col">Reason</th></tr></thead>
        <tbody>${record.workspaces.map(
          (decision) => html`<tr>
            <th scope="row">${decision.identifier}</th>
            <td>${decision.admitted ? html`<span class="verdict pass">admitted</span>` : html`<span class="verdict fail">refused</span>`}</td>
            <td>${decision.senderAuthentication ?? 'off'}</td>
            <td>${decision.reason ?? html`<span class="muted">—</span>`}</td>
          </tr>`,
        )}</tbody>
      </table></div>
    </section>
    <section aria-labelledby="attachments-heading">
      <h2 id="attachments-heading">Attachments</h2>
      ${record.attachments.length === 0 ? html`<p>The message has no attachments.</p>` : record.attachments.map((entry) => attachment(record.id, entry, input))}
    </section>
  </article>`;
  return page({
    title: `Message ${record.id}`,
    section: 'messages',
    logoutCsrf: input.signedIn ? input.csrf : null,
    body,
  });
}

function attachment(messageId: string, entry: AttachmentEntry, input: MessagePageInput): Html {
  const name = entry.originalFileName ?? entry.fileName;
  const download = input.stored.has(entry.entry)
    ? html`<a href="/v1/messages/${messageId}/attachments/${entry.entry}">Download</a>`
    : html`<span class="muted">No longer stored${entry.state === 'skipped' ? ' (skipped parts are not kept)' : ' (released once the service has it)'}</span>`;
  return html`<section class="attachment" aria-labelledby="entry-${entry.entry}" data-entry="${entry.entry}">
    <h3 id="entry-${entry.entry}"><span class="file-name">${name}</span> ${stateBadge(entry.state)}</h3>
    <dl class="facts">
      <dt>State</dt><dd data-field="state">${entry.state}</dd>
      <dt>Reason</dt><dd>${entry.reason ?? html`<span class="muted">—</span>`}</dd>
      <dt>Workspace</dt><dd>${entry.workspace ?? html`<span class="muted">none</span>`}</dd>
      ${entry.subaddress === undefined ? null : html`<dt>Subaddress tag</dt><dd data-field="subaddress">${entry.subaddress}</dd>`}
      ${entry.documentType === undefined ? null : html`<dt>Document type of the address</dt><dd data-field="documentType">${entry.documentType}</dd>`}
      <dt>Attempts</dt><dd>${entry.attempts}</dd>
      <dt>Sent as</dt><dd class="file-name">${entry.fileName}</dd>
      <dt>Detected type</dt><dd>${entry.detectedType ?? html`<span class="muted">unsupported</span>`}</dd>
      <dt>Declared type</dt><dd>${entry.contentType}</dd>
      <dt>Size</dt><dd>${size(entry.size)}</dd>
      <dt>Path (MIME leaf)</dt><dd>part ${entry.part}, entry ${entry.entry}</dd>
      <dt>SHA-256</dt><dd class="hash">${entry.sha256}</dd>
      <dt>Document</dt><dd>${entry.documentIdentifier === null ? html`<span class="muted">none</span>` : html`<a href="/v1/documents/${encodeURIComponent(entry.documentIdentifier)}">${entry.documentIdentifier}</a>`}</dd>
      <dt>Parse outcome</dt><dd>${parseOutcome(entry)}</dd>
      <dt>Updated</dt><dd>${time(entry.updatedAt)}</dd>
      <dt>Stored bytes</dt><dd>${download}</dd>
    </dl>
    ${attachmentPreview(messageId, entry, input.stored.has(entry.entry))}
    ${entry.state === 'failed' ? retryForm(input.retryJob(entry.entry), input.csrf, name, `/messages/${messageId}`) : null}
  </section>`;
}

function parseOutcome(entry: AttachmentEntry): Html | string {
  const parts: string[] = [];
  if (entry.ready === true) parts.push(`ready${entry.readyDt ? ` at ${entry.readyDt}` : ''}`);
  if (entry.failed === true) parts.push('parsing failed');
  if (entry.error) parts.push(`${entry.error.errorCode}: ${entry.error.errorDetail}`);
  if (entry.completion) {
    const { state, polls, reason } = entry.completion;
    parts.push(`completion tracking ${state} after ${polls} poll(s)${reason ? `: ${reason}` : ''}`);
  }
  for (const warning of entry.warnings) {
    parts.push(`warning ${warning.warningCode}${warning.warningDetail ? `: ${warning.warningDetail}` : ''}`);
  }
  if (entry.requestError) {
    for (const error of entry.requestError.errors) {
      parts.push(
        `${entry.requestError.type}: ${error.attr ? `${error.attr} ` : ''}${error.code} (${error.detail})`,
      );
    }
  }
  return parts.length === 0 ? html`<span class="muted">not known</span>` : html`${parts.join('; ')}`;
}

/** Why the message is (or was) held, and while it is held, its Release and Discard buttons. */
function holdNotice(record: MessageRecord, csrf: string): Html {
  const hold = record.hold;
  if (!hold) return html``;
  if (record.state !== 'held') {
    return html`<p data-field="hold">Was held for ${hold.workspace}: ${hold.reason}; ${record.state ?? 'released'}.</p>
    ${confirmationOf(record)}`;
  }
  return html`<p data-field="hold"><span class="verdict fail">held</span> for ${hold.workspace}: ${hold.reason}; nothing of it is uploaded.
      Release uploads its documents; Release and allow sender also adds the sender to the workspace's allow-list; Discard deletes it.</p>
    ${confirmationOf(record)}
    ${heldActions(record, csrf, record.subject ?? '(no subject)', null)}
    ${messageReplayHint(record)}`;
}

/** A forwarding confirmation's code, link and text: what the tenant needs to start forwarding. */
function confirmationOf(record: MessageRecord): Html {
  const confirmation = record.hold?.confirmation;
  if (!confirmation) return html``;
  // Only an https: link the provider's pattern matched is made a link (forwarding-confirmation.ts).
  const link =
    confirmation.link === null
      ? html`<span class="muted">none in the text</span>`
      : html`<a href="${confirmation.link}" rel="noreferrer noopener" target="_blank">${confirmation.link}</a>`;
  return html`<section data-field="confirmation">
    <h2>${confirmation.provider} forwarding confirmation</h2>
    <p>Confirmation code: <code>${confirmation.code ?? 'none shown'}</code></p>
    <p>Confirmation link: ${link}</p>
    ${confirmation.text === null ? html`` : html`<pre class="confirmation-text">${confirmation.text}</pre>`}
  </section>`;
}

function retryForm(jobId: string, csrf: string, name: string, back: string): Html {
  return html`<form method="post" action="/failed/retry" class="inline">
    <input type="hidden" name="csrf" value="${csrf}">
    <input type="hidden" name="jobId" value="${jobId}">
    <input type="hidden" name="back" value="${back}">
    <button type="submit" aria-label="Retry the upload of ${name}">Retry upload</button>
  </form>`;
}

function authentication(auth: SenderAuthentication | null): Html {
  if (auth === null)
    return html`<p>Not checked: no workspace the message went to asks for sender authentication.</p>`;
  const { results } = auth;
  const verdicts = Object.entries(auth.verdicts);
  return html`<dl class="facts">
    <dt>From domain</dt><dd>${auth.fromDomain ?? html`<span class="muted">unusable From</span>`}</dd>
    ${verdicts.map(
      ([
        mode,
        verdict,
      ]) => html`<dt>Verdict (${mode})</dt><dd><span class="verdict ${verdict.outcome}">${verdict.outcome}</span>
        ${verdict.outcome === 'pass' ? `by ${verdict.via} of ${verdict.domain}` : verdict.reason}</dd>`,
    )}
    <dt>SPF</dt><dd>${results.spf.result}${results.spf.domain ? ` (${results.spf.domain})` : ''}</dd>
    <dt>DKIM</dt><dd>${results.dkim.length === 0 ? 'not signed' : results.dkim.map((d) => `${d.result} (d=${d.domain ?? '?'}, s=${d.selector ?? '?'})`).join('; ')}</dd>
    <dt>DMARC</dt><dd>${results.dmarc === null ? 'not evaluated' : `${results.dmarc.result}${results.dmarc.policy ? ` (p=${results.dmarc.policy})` : ''}`}</dd>
    <dt>ARC</dt><dd>${results.arc === null ? 'no ARC set' : JSON.stringify(results.arc)}</dd>
  </dl>`;
}

/** The scanners' verdicts (the record's `scan`). */
function scanFacts(scan: ScanRecord): Html {
  const { malware, spam } = scan;
  const unscanned = (reason: string | null) =>
    html`<span class="verdict fail">unscanned</span> ${reason ?? ''}`;
  return html`<dl class="facts">
    <dt>Malware (clamd)</dt><dd data-field="malware">${
      malware === null
        ? html`<span class="muted">not scanned</span>`
        : malware.verdict === 'unscanned'
          ? unscanned(malware.reason)
          : html`<span class="verdict ${malware.verdict === 'clean' ? 'pass' : 'fail'}">${malware.verdict}</span>${malware.signature ? ` ${malware.signature}` : ''}`
    }</dd>
    <dt>Spam (rspamd)</dt><dd data-field="spam">${
      spam === null
        ? html`<span class="muted">not asked</span>`
        : spam.action === null
          ? unscanned(spam.reason)
          : html`${spam.action}, score ${spam.score ?? '?'} (policy ${spam.policy})`
    }</dd>
  </dl>`;
}
