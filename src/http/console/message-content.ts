import type { AttachmentEntry } from '../../record/message-record.ts';
import { previewable } from '../attachment-download.ts';
import { type Html, html } from './html.ts';
import { size } from './layout.ts';
import { type MessageSource, RAW_SHOWN_BYTES } from './message-source.ts';

/**
 * What a developer testing mail looks at on the message page, as in Mailpit: the HTML body in
 * a sandboxed frame (console-routes.ts serves it with a CSP that runs no script and loads
 * nothing remote), the text body, every header, and the raw source.
 */
export function messageContent(messageId: string, source: MessageSource): Html {
  const { view } = source;
  if (view === null) {
    return html`<section aria-labelledby="body-heading">
      <h2 id="body-heading">Body</h2>
      <p class="muted">The e-mail itself is no longer stored (its retention is over, or it was discarded).</p>
    </section>`;
  }
  const cutRaw = source.size > RAW_SHOWN_BYTES;
  return html`<section aria-labelledby="body-heading">
      <h2 id="body-heading">Body</h2>
      ${view.cut ? html`<p class="muted">The body is longer than the page shows: download the e-mail for all of it.</p>` : null}
      ${
        view.html === null
          ? null
          : html`<h3>HTML</h3>
      <p class="muted">Shown in a sandbox: no script runs and nothing is loaded from the network (remote images stay blank).</p>
      <iframe class="mail-html" sandbox="" referrerpolicy="no-referrer" src="/messages/${messageId}/body.html" title="HTML body of the message"></iframe>`
      }
      ${view.text === null ? null : html`<h3>Text</h3><pre class="mail-text" data-field="text">${view.text}</pre>`}
      ${view.html === null && view.text === null ? html`<p>The message has no text or HTML body.</p>` : null}
    </section>
    <section aria-labelledby="headers-heading">
      <h2 id="headers-heading">Headers</h2>
      <div class="table-wrap"><table class="headers">
        <caption class="visually-hidden">Every header of the message, in order</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Value</th></tr></thead>
        <tbody>${view.headers.map((header) => html`<tr><th scope="row">${header.name}</th><td>${header.value}</td></tr>`)}</tbody>
      </table></div>
    </section>
    <section aria-labelledby="raw-heading">
      <h2 id="raw-heading">Raw source</h2>
      <details class="raw-source">
        <summary>Show the e-mail as received (${size(source.size)}${cutRaw ? html`, the first ${size(RAW_SHOWN_BYTES)} here` : null})</summary>
        <pre data-field="raw">${source.raw ?? ''}</pre>
      </details>
    </section>`;
}

/** An image or a PDF that is still stored, shown in place under its facts. */
export function attachmentPreview(messageId: string, entry: AttachmentEntry, stored: boolean): Html | null {
  if (!stored || !previewable(entry.detectedType)) return null;
  const name = entry.originalFileName ?? entry.fileName;
  if (entry.detectedType === 'application/pdf') {
    return html`<iframe class="preview-pdf" src="/messages/${messageId}/attachments/${entry.entry}/preview" title="Preview of ${name}"></iframe>`;
  }
  return html`<img class="preview-image" src="/messages/${messageId}/attachments/${entry.entry}/preview" alt="Preview of ${name}">`;
}
