import { type Html, html, type Rendered } from './html.ts';

/** The console's pages, for the navigation and its current-page marker. */
export type ConsoleSection = 'messages' | 'held' | 'refused' | 'failed' | 'queues' | 'routes' | 'login';

export interface PageOptions {
  title: string;
  section: ConsoleSection;
  /** The session's CSRF token for the logout form; null: nobody to sign out (no http.token). */
  logoutCsrf: string | null;
  body: Rendered;
}

const sections: ReadonlyArray<{ section: ConsoleSection; href: string; label: string }> = [
  { section: 'messages', href: '/', label: 'Messages' },
  { section: 'held', href: '/held', label: 'Held' },
  { section: 'refused', href: '/refused', label: 'Refused' },
  { section: 'failed', href: '/failed', label: 'Failed uploads' },
  { section: 'queues', href: '/queues', label: 'Queues' },
  { section: 'routes', href: '/routes', label: 'Routes' },
];

/** The frame every console page shares: landmarks, a skip link, the navigation. */
export function page({ title, section, logoutCsrf, body }: PageOptions): Html {
  const nav =
    section === 'login'
      ? null
      : html`<nav aria-label="Console">
      <ul>
        ${sections.map(
          (item) =>
            html`<li><a href="${item.href}"${item.section === section ? html` aria-current="page"` : null}>${item.label}</a></li>`,
        )}
        <li><a href="/admin/queues/">Bull Board</a></li>
      </ul>
      ${
        logoutCsrf === null
          ? null
          : html`<form method="post" action="/logout" class="logout">
        <input type="hidden" name="csrf" value="${logoutCsrf}">
        <button type="submit">Sign out</button>
      </form>`
      }
    </nav>`;
  return html`<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title} · ingest-gateway</title>
  <link rel="stylesheet" href="/console/assets/console.css">
  <script src="/console/assets/console.js" defer></script>
</head>
<body>
  <a class="skip-link" href="#main">Skip to content</a>
  <header class="site-header">
    <p class="brand">ingest-gateway</p>
    ${nav}
  </header>
  <main id="main" tabindex="-1">
    ${body}
  </main>
</body>
</html>
`;
}

/** An attachment state as a badge whose colour repeats, never replaces, its text. */
export function stateBadge(state: string): Html {
  return html`<span class="state state-${state}">${state}</span>`;
}

/** A message's documents as a table cell shows them: each file's name and state, or "none". */
export function attachmentList(
  attachments: readonly { originalFileName?: string | null; fileName: string; state: string }[],
): Html {
  return attachments.length === 0
    ? html`<span class="muted">none</span>`
    : html`<ul class="attachments">${attachments.map(
        (a) =>
          html`<li><span class="file-name">${a.originalFileName ?? a.fileName}</span> ${stateBadge(a.state)}</li>`,
      )}</ul>`;
}

/** A time as the browser's locale will show it, with the exact instant kept in datetime. */
export function time(iso: string | null): Html {
  if (iso === null) return html`<span class="muted">—</span>`;
  return html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>`;
}

/** Bytes as a person reads them. */
export function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
