import { type Html, html } from './html.ts';
import { page, time } from './layout.ts';

/** The route table in force, as the console shows it: each address, its workspace and where it came from. */
export interface RouteView {
  /** With `discovery`: the organization and when its table was last read whole (ISO; null: never). */
  readonly discovery: { readonly organization: string; readonly refreshedAt: string | null } | null;
  readonly routes: readonly {
    readonly address: string;
    readonly workspace: string;
    /** The document type whose address it is (its uploads carry it); absent for a workspace's own. */
    readonly documentType?: string;
    /** `file`, `service`, or `grace` (an address the service replaced, still routed). */
    readonly source: string;
  }[];
}

/** GET /routes: the addresses the gateway accepts, where each route came from, and the table's last refresh. */
export function routesPage(view: RouteView, logoutCsrf: string | null): Html {
  const refreshed =
    view.discovery === null
      ? html`<p>Routes come from the configuration file (no <code>discovery</code>).</p>`
      : html`<p>Organization <code>${view.discovery.organization}</code>; route table last read from the service:
          <span data-refreshed>${
            view.discovery.refreshedAt === null
              ? html`never, so only the file's own workspaces are routed`
              : time(view.discovery.refreshedAt)
          }</span>.</p>`;
  const body = html`<h1>Routes</h1>
    ${refreshed}
    <div class="table-wrap"><table class="routes">
      <caption class="visually-hidden">Ingest addresses and their workspaces</caption>
      <thead><tr><th scope="col">Address</th><th scope="col">Workspace</th><th scope="col">Source</th></tr></thead>
      <tbody>${view.routes.map(
        (route) => html`<tr data-route="${route.address}">
          <th scope="row">${route.address}</th>
          <td data-label="Workspace">${route.workspace}${
            route.documentType === undefined
              ? null
              : html` (document type <code data-document-type>${route.documentType}</code>)`
          }</td>
          <td data-label="Source" data-source>${route.source}</td>
        </tr>`,
      )}</tbody>
    </table></div>`;
  return page({ title: 'Routes', section: 'routes', logoutCsrf, body });
}
