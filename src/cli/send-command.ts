import { type Command, InvalidArgumentError, Option } from 'commander';
import type { AttachmentOutcome } from './await-documents.ts';
import { type CommandContext, EXIT_FAILED, EXIT_OK, USAGE_ERROR } from './cli-context.ts';
import { configOption } from './config-option.ts';
import { defaultHttpUrl, gatewayHttp } from './gateway-http.ts';
import { collect, existingFile, httpUrl, positiveSeconds, serverAddress } from './option-parsers.ts';
import { composeTestMail, type HeaderField, parseHeaderField, queueIdOf } from './test-mail.ts';

interface SendOptions {
  server: { host: string; port: number };
  from: string;
  to: string[];
  cc?: string[];
  subject: string;
  header?: HeaderField[];
  body?: string;
  html?: string;
  attach?: string[];
  tls?: boolean;
  tlsInsecure?: boolean;
  wait?: number;
  http?: string;
  config?: string;
}

/** As commander hands them over: the three the action checks may be missing. */
type GivenOptions = Omit<SendOptions, 'server' | 'from' | 'to'> &
  Partial<Pick<SendOptions, 'server' | 'from' | 'to'>>;

/** How long --wait waits when given no number: a few uploads to a responsive service. */
const defaultWaitSeconds = '60';

/** `ingest-gateway send`: one test e-mail, and with --wait the documents it became. */
export function registerSendCommand(program: Command, context: CommandContext): void {
  program
    .command('send')
    .description('send one test e-mail and print the reply and the queue id')
    .usage('--server HOST:PORT --from ADDR --to ADDR [--subject S] [--attach FILE]... [options]')
    .option('--server <HOST:PORT>', 'the SMTP server, e.g. 127.0.0.1:2525', serverAddress)
    .option('--from <ADDR>', 'the sender (MAIL FROM and the From header)')
    .option('--to <ADDR>', 'a recipient; repeat for more', collect(String))
    .option('--cc <ADDR>', 'a copy recipient; repeat for more', collect(String))
    .option('--subject <S>', 'the subject', 'Documents')
    .option('--header <"NAME: VALUE">', 'an extra header field; repeat for more', collect(headerField))
    .option('--body <TEXT>', 'the plain-text body')
    .option('--html <HTML>', 'an HTML body (with --body too: both, as alternatives)')
    .option('--attach <FILE>', 'a file to attach; repeat for more', collect(existingFile))
    .option('--tls', 'require STARTTLS, with a certificate that verifies')
    .addOption(
      new Option(
        '--tls-insecure',
        'STARTTLS without verifying the certificate: for a self-signed one in development only',
      ).implies({ tls: true }),
    )
    .addOption(
      new Option('--wait [SECONDS]', 'wait up to SECONDS for the documents and print their identifiers')
        .preset(defaultWaitSeconds)
        .argParser(positiveSeconds),
    )
    .option(
      '--http <URL>',
      `the gateway's HTTP API, for --wait (default: from --config, else ${defaultHttpUrl})`,
      httpUrl,
    )
    .addOption(configOption(null))
    .addHelpText(
      'after',
      [
        '',
        'Prints the reply and the queue id from it. With --wait, reads GET {http}/v1/messages/{id}',
        'until every attachment is uploaded, rejected, failed or skipped (and, where the workspace',
        'tracks completion, parsed or parse_failed), with HTTP_TOKEN as the bearer token when set.',
        'Exit code 1 when the mail or a recipient is refused, when a document is rejected, failed',
        'or parse_failed, or when the wait times out.',
      ].join('\n'),
    )
    .action(async (options: GivenOptions, command: Command) => {
      // Checked here rather than declared mandatory: commander checks mandatory options before
      // unknown ones, and a mistyped --too would then be reported as a missing --to.
      const { server, from, to } = options;
      if (server === undefined || from === undefined || to === undefined) {
        const flags =
          server === undefined
            ? '--server <HOST:PORT>'
            : from === undefined
              ? '--from <ADDR>'
              : '--to <ADDR>';
        return command.error(`error: required option '${flags}' not specified`, USAGE_ERROR);
      }
      context.finish(await send({ ...options, server, from, to }, command, context));
    });
}

function headerField(text: string): HeaderField {
  const field = parseHeaderField(text);
  if ('problem' in field) throw new InvalidArgumentError(field.problem);
  return field;
}

async function send(options: SendOptions, command: Command, context: CommandContext): Promise<number> {
  const { stdout, stderr } = context;
  // The HTTP API is resolved first: a bad --config is a usage error, found before anything is sent.
  const http = options.wait === undefined ? undefined : await gatewayHttp(options, command, context);
  const [{ createTransport }, { awaitDocuments, outcomeWord, RecordUnavailableError }] = await Promise.all([
    import('nodemailer'),
    import('./await-documents.ts'),
  ]);
  const transport = createTransport({
    host: options.server.host,
    port: options.server.port,
    secure: false,
    // Without --tls the mail goes in clear even when STARTTLS is offered: a local gateway's
    // development certificate would otherwise fail the send.
    ignoreTLS: options.tls !== true,
    requireTLS: options.tls === true,
    tls: { rejectUnauthorized: options.tlsInsecure !== true },
  });
  let reply: string;
  let refusedRecipients = false;
  try {
    const info = await transport.sendMail(
      composeTestMail({
        ...options,
        cc: options.cc ?? [],
        headers: options.header ?? [],
        attach: options.attach ?? [],
      }),
    );
    reply = info.response;
    for (const recipient of info.rejected) {
      refusedRecipients = true;
      stderr.write(`recipient refused: ${recipient}\n`);
    }
  } catch (caught) {
    stderr.write(`not accepted: ${describeSendError(caught)}\n`);
    return EXIT_FAILED;
  } finally {
    transport.close();
  }
  stdout.write(`${reply}\n`);
  const queueId = queueIdOf(reply);
  if (queueId !== null) stdout.write(`queue id: ${queueId}\n`);
  if (http === undefined) return refusedRecipients ? EXIT_FAILED : EXIT_OK;
  if (queueId === null) {
    stderr.write('--wait: the reply names no queue id, so this is not the gateway\n');
    return EXIT_FAILED;
  }
  try {
    const waited = await awaitDocuments({ ...http, queueId, timeoutMs: (options.wait ?? 0) * 1000 });
    stdout.write(formatOutcomes(waited.attachments, outcomeWord));
    if (!waited.settled) {
      stderr.write(`--wait: not every document was done after ${options.wait} s\n`);
      return EXIT_FAILED;
    }
    const unsuccessful = waited.attachments.some((a) => a.state === 'rejected' || a.state === 'failed');
    return refusedRecipients || unsuccessful ? EXIT_FAILED : EXIT_OK;
  } catch (caught) {
    if (!(caught instanceof RecordUnavailableError)) throw caught;
    stderr.write(`--wait: ${caught.message}\n`);
    return EXIT_FAILED;
  }
}

/** An SMTP refusal is printed as the server's reply; a TLS failure says what to do about it. */
function describeSendError(caught: unknown): string {
  if (!(caught instanceof Error)) return String(caught);
  if ('response' in caught && typeof caught.response === 'string') return caught.response;
  const certificate = /certificate|self.signed/i.test(caught.message);
  return certificate
    ? `${caught.message} (for a self-signed certificate in development: --tls-insecure)`
    : caught.message;
}

function formatOutcomes(
  attachments: readonly AttachmentOutcome[],
  word: (attachment: AttachmentOutcome) => string,
): string {
  const rows = attachments.map((attachment) =>
    [
      word(attachment),
      attachment.fileName,
      attachment.workspace ?? '-',
      attachment.documentIdentifier ?? attachment.reason ?? '-',
    ].join('\t'),
  );
  return `${['state\tfile\tworkspace\tdocument or reason', ...rows].join('\n')}\n`;
}
