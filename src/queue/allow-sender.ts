import type { Logger } from '../logger.ts';
import type { AllowListAddition } from '../parsing-api/allow-list-update.ts';
import type { WorkspaceClientOptions } from '../parsing-api/workspace-client.ts';
import type { AllowedSenders } from '../record/allowed-senders.ts';

/**
 * "Release, and admit this sender from now on" (README, "Held mail"): the rule goes into the
 * workspace's `whitelistIngestAddresses` on the parsing service, and into Redis, from where
 * every gateway instance adds it to the workspace's configured allow-list.
 */
export interface SenderAllowing {
  /** Rejects (the service refused or did not answer) before anything is recorded in Redis. */
  allow(request: AllowRequest): Promise<AllowedRule[]>;
}

export interface AllowRequest {
  /** The workspaces the message was held for. */
  workspaces: readonly string[];
  /** `ap@partner.example` or `*@partner.example`. */
  rule: string;
  messageId: string;
}

export interface AllowedRule {
  workspace: string;
  rule: string;
  /** What the service's list came to: `added`, `present` (named already), or `open` (empty: left so). */
  service: AllowListAddition['kind'];
}

export interface SenderAllowingOptions {
  allowed: AllowedSenders;
  /** The parsing service as the settings in force name it. */
  service: () => WorkspaceClientOptions;
  logger: Logger;
}

export function createSenderAllowing(options: SenderAllowingOptions): SenderAllowing {
  const log = options.logger.child({ component: 'allow-sender' });
  return {
    async allow({ workspaces, rule, messageId }) {
      // The parsing API's HTTP client loads only here: an SMTP-only process that never
      // releases with allowSender never loads it (undici is the uploader's).
      const [{ createWorkspaceClient }, { addAllowListRule }] = await Promise.all([
        import('../parsing-api/workspace-client.ts'),
        import('../parsing-api/allow-list-update.ts'),
      ]);
      const client = createWorkspaceClient(options.service());
      const allowed: AllowedRule[] = [];
      try {
        for (const workspace of workspaces) {
          const addition = await options.allowed.exclusively(workspace, () =>
            addAllowListRule(client, workspace, rule),
          );
          allowed.push({ workspace, rule, service: addition.kind });
        }
      } finally {
        await client.close();
      }
      const at = new Date().toISOString();
      for (const { workspace, service } of allowed) {
        await options.allowed.add(workspace, rule, { messageId, at });
        log.info({ queueId: messageId, workspace, rule, service }, 'sender allowed at a release');
      }
      return allowed;
    },
  };
}
