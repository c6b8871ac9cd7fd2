import type { Readable } from 'node:stream';
import type { WorkspaceConfig } from '../../config/schema.ts';
import { RefusalError } from '../../errors.ts';
import type { Transaction } from '../../intake/decide.ts';
import type { ReceiveMessage } from '../../intake/receive-message.ts';
import type { RoutedWorkspace, RouteTable } from '../../intake/route-table.ts';
import type { Logger } from '../../logger.ts';
import { routeRefusal, subaddressRefusal } from '../../smtp/session-checks.ts';
import { tooManyRecipients } from '../../smtp/session-limits.ts';
import { acceptedReply, replyFor } from '../../smtp/smtp-reply.ts';
import type { Progress } from '../progress.ts';
import type { Output } from '../workspace/command-io.ts';
import { crlfLineEnds } from './crlf-line-ends.ts';
import { type MailSource, mailSources } from './mail-sources.ts';
import { replayEnvelope } from './replay-envelope.ts';

export interface ReplayOptions {
  to?: readonly string[];
  from?: string;
}

export interface ReplayTarget {
  receive: ReceiveMessage;
  routes: RouteTable<WorkspaceConfig>;
  /** smtp.maxRecipients. */
  maxRecipients: number;
}

export interface ReplayRun {
  out: Output;
  logger: Logger;
  /** Bytes read for a message's header block (the walk's own limit). */
  headBytes: number;
  /** The progress line, between the output lines; absent: the messages are not counted first. */
  progress?: Progress;
}

/** HELO of a replayed transaction: no client greeted the gateway. */
const REPLAY_HELO = 'replay';

/**
 * Replays the messages of `paths` through the intake one after another, as SMTP transactions
 * with an envelope made from each message's headers or the options (replay-envelope.ts), and
 * writes one line per message: its label and the reply SMTP would have given. Resolves with
 * how many were taken and how many were not (refused, or failed and to be replayed again).
 */
export async function replayMessages(
  paths: readonly string[],
  options: ReplayOptions,
  target: ReplayTarget,
  run: ReplayRun,
): Promise<{ accepted: number; refused: number }> {
  const total = run.progress ? await countMessages(paths, run.headBytes) : 0;
  let accepted = 0;
  let refused = 0;
  if (total > 0) run.progress?.advance(0, total);
  for await (const source of mailSources(paths, run.headBytes)) {
    const reply = await replayOne(source, options, target, run.logger);
    if (reply.startsWith('250 ')) accepted += 1;
    else refused += 1;
    // The progress line is cleared for the output line, then shown again below it.
    run.progress?.end();
    run.out.write(`${source.label}  ${reply}\n`);
    run.progress?.advance(accepted + refused, Math.max(total, accepted + refused));
  }
  return { accepted, refused };
}

async function countMessages(paths: readonly string[], headBytes: number): Promise<number> {
  let count = 0;
  for await (const _ of mailSources(paths, headBytes)) count += 1;
  return count;
}

async function replayOne(
  source: MailSource,
  options: ReplayOptions,
  target: ReplayTarget,
  logger: Logger,
): Promise<string> {
  const { routes } = target;
  const log = logger.child({ replay: source.label });
  try {
    const envelope = replayEnvelope(await source.head(), {
      ...options,
      separatorSender: source.separatorSender,
      isServed: (address) => routes.route(address) !== undefined || routes.isPostmaster(address),
    });
    const transaction = admitRecipients(envelope.rcptTo, target);
    const result = await target.receive(
      withLineEnds(source.open()),
      { ...transaction, mailFrom: envelope.mailFrom, remoteAddress: null, helo: REPLAY_HELO, via: 'replay' },
      log,
    );
    return `250 ${acceptedReply(result.messageId)}`;
  } catch (err) {
    const reply = replyFor(err);
    if (reply.internal) log.error({ err }, 'message not replayed: internal failure, replay it again');
    return `${reply.responseCode} ${reply.message}`;
  }
}

/**
 * RCPT for each recipient in turn, by the rules SMTP applies (session-checks.ts): the first
 * refusal refuses the message, which a replay sends whole or not at all.
 */
function admitRecipients(
  rcptTo: readonly string[],
  target: ReplayTarget,
): Pick<Transaction, 'rcptTo' | 'workspaces' | 'postmaster'> {
  const { routes } = target;
  if (rcptTo.length === 0) {
    throw new RefusalError(
      'RECIPIENT_UNKNOWN',
      'no recipient: the message names none in Delivered-To, X-Original-To, To or Cc; give --to',
    );
  }
  if (rcptTo.length > target.maxRecipients) throw tooManyRecipients(target.maxRecipients);
  const workspaces: RoutedWorkspace<WorkspaceConfig>[] = [];
  const earlier: { address: string; routed: RoutedWorkspace<WorkspaceConfig> | undefined }[] = [];
  let postmaster = false;
  for (const recipient of rcptTo) {
    const routed = routes.route(recipient);
    const refusal =
      routeRefusal(recipient, routed, earlier[0], (address) => routes.isPostmaster(address)) ??
      (routed ? subaddressRefusal(recipient, routed, earlier) : null);
    if (refusal) throw refusal;
    earlier.push({ address: recipient, routed });
    if (!routed) postmaster = true;
    else if (!workspaces.some((ws) => ws.config.identifier === routed.config.identifier))
      workspaces.push(routed);
  }
  return { rcptTo: [...rcptTo], workspaces, postmaster };
}

/** The message with CRLF line ends, and a read error of its file ending the transaction. */
function withLineEnds(input: Readable): Readable {
  const output = crlfLineEnds();
  input.on('error', (err) => output.destroy(err));
  return input.pipe(output);
}
