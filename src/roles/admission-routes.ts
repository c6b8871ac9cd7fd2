import type { GatewayConfig, WorkspaceConfig } from '../config/schema.ts';
import type { Transaction } from '../intake/decide.ts';
import { createRouteTable, type RouteTable } from '../intake/route-table.ts';
import type { LiveSettings } from '../live-settings.ts';
import type { AllowedSenders } from '../record/allowed-senders.ts';
import { withAllowedSenders } from '../sender/allowed-sender-rules.ts';
import type { RunningSettings } from './role-context.ts';

/** A routed workspace; `addressOfDocumentType` marks the route of a document type's address. */
type Workspace = WorkspaceConfig & { readonly addressOfDocumentType?: string };

/**
 * The SMTP role's routes: the configured workspaces with the senders allowed at releases
 * (kept in Redis by any instance) added to their allow-lists. The additions are read at the
 * start and again whenever a sender is not admitted (`readmit`), so a sender allowed on
 * another instance a moment ago is admitted here too, while mail from admitted senders costs
 * no read. The table is rebuilt when the configuration is reloaded or the additions change.
 */
export interface AdmissionRoutes {
  table(): RouteTable<Workspace>;
  readmit(transaction: Transaction): Promise<Transaction | null>;
}

export async function createAdmissionRoutes(
  settings: LiveSettings<RunningSettings>,
  /** The workspaces routed now (the file's, and with discovery the service's); a new list when they change. */
  routedWorkspaces: () => readonly Workspace[],
  allowed: AllowedSenders,
): Promise<AdmissionRoutes> {
  let added = await allowed.read();
  let addedText = JSON.stringify([...added]);
  let built:
    | {
        config: GatewayConfig;
        routed: readonly Workspace[];
        added: typeof added;
        table: RouteTable<Workspace>;
      }
    | undefined;

  function table(): RouteTable<Workspace> {
    const { config } = settings.current();
    const routed = routedWorkspaces();
    if (built === undefined || built.config !== config || built.routed !== routed || built.added !== added) {
      const workspaces = withAllowedSenders(routed, added);
      built = {
        config,
        routed,
        added,
        table: createRouteTable(workspaces, config.auth.senderAuthentication, {
          subaddressSeparator: config.smtp.subaddressSeparator,
        }),
      };
    }
    return built.table;
  }

  return {
    table,
    async readmit(transaction) {
      const next = await allowed.read();
      const nextText = JSON.stringify([...next]);
      if (nextText !== addedText) {
        added = next;
        addedText = nextText;
      }
      // Routed at RCPT, perhaps from a table an earlier readmit has since replaced.
      const routes = table();
      const configured = routedWorkspaces();
      const workspaces = transaction.workspaces.map((workspace) => {
        // The route of the same address kind: the workspace's own, or the same document type's.
        const ingestEmail = configured.find(
          (candidate) =>
            candidate.identifier === workspace.config.identifier &&
            candidate.addressOfDocumentType === workspace.documentType,
        )?.ingestEmail;
        const rerouted = ingestEmail === undefined ? undefined : routes.route(ingestEmail);
        if (rerouted === undefined) return workspace;
        // The ingest address routes without the tag the recipient was given: keep that tag.
        return workspace.subaddress === undefined
          ? rerouted
          : { ...rerouted, subaddress: workspace.subaddress };
      });
      const changed = workspaces.some((workspace, index) => workspace !== transaction.workspaces[index]);
      return changed ? { ...transaction, workspaces } : null;
    },
  };
}
