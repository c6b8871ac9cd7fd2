import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  arcForward,
  createSigningKey,
  dkimSignMessage,
  type SigningKey,
} from '../../harness/dkim-signing.ts';
import { createFakeDns, type FakeDns } from '../../harness/dns-fake.ts';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import type { WorkspaceInput } from '../../harness/test-config.ts';

/**
 * Sender authentication end to end: real SMTP from 127.0.0.1, mailauth checking SPF, DKIM,
 * DMARC and ARC against an in-memory DNS, keys made for this run. Every refusal is checked
 * for its exact reply and for nothing having reached the parsing API.
 */

const workspaces: WorkspaceInput[] = [
  {
    identifier: 'ws-aligned',
    ingestEmail: 'aligned@ingest.test',
    whitelistIngestAddresses: ['*@acme.example'],
    senderAuthentication: 'aligned',
  },
  {
    identifier: 'ws-dmarc',
    ingestEmail: 'dmarc@ingest.test',
    whitelistIngestAddresses: ['*@policy.example'],
    senderAuthentication: 'dmarc',
  },
  { identifier: 'ws-off', ingestEmail: 'off@ingest.test', whitelistIngestAddresses: ['*@acme.example'] },
];

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('sender authentication', () => {
  let harness: Harness;
  let dns: FakeDns;
  let acme: SigningKey;
  let acmeUnreachable: SigningKey;
  let other: SigningKey;
  let policy: SigningKey;
  let lists: SigningKey;
  let forwarder: SigningKey;
  let evil: SigningKey;

  beforeAll(async () => {
    dns = createFakeDns({
      // acme.example sends from its own server, never from the test client's 127.0.0.1.
      'TXT acme.example': ['v=spf1 ip4:192.0.2.10 -all'],
      'TXT mail.acme.example': ['v=spf1 ip4:127.0.0.1 -all'],
      'TXT evil.test': ['v=spf1 ip4:127.0.0.1 -all'],
      'TXT lists.example': ['v=spf1 ip4:127.0.0.1 -all'],
      'TXT forwarder.example': ['v=spf1 ip4:127.0.0.1 -all'],
      'TXT _dmarc.policy.example': ['v=DMARC1; p=none'],
      'TXT policy.example': ['v=spf1 ip4:192.0.2.20 -all'],
    });
    acme = createSigningKey(dns, 'acme.example', 'sel');
    acmeUnreachable = createSigningKey(dns, 'acme.example', 'broken', 'ed25519');
    dns.fail(acmeUnreachable.recordName);
    dns.fail('flaky.acme.example', 'ETIMEOUT');
    other = createSigningKey(dns, 'other.example', 'sel', 'ed25519');
    policy = createSigningKey(dns, 'policy.example', 'sel');
    lists = createSigningKey(dns, 'lists.example', 'arc', 'ed25519');
    forwarder = createSigningKey(dns, 'forwarder.example', 'arc', 'ed25519');
    evil = createSigningKey(dns, 'evil.test', 'arc', 'ed25519');
    harness = await startHarness({
      workspaces,
      auth: { trustedArcSealers: ['lists.example', 'LISTS.example.'] },
      resolver: dns.resolver,
    });
  });
  afterAll(async () => harness?.close());

  /** A message with its own PDF, so each test can tell its upload from the others'. */
  async function invoice(label: string, from = 'Ann <ann@acme.example>', to = 'aligned@ingest.test') {
    const pdf = uniquePdf(label);
    const message = await composeMessage({
      from,
      to,
      subject: `Invoice ${label}`,
      attachments: [{ filename: `${label}.pdf`, content: pdf, contentType: 'application/pdf' }],
    });
    return { pdf, message };
  }

  async function send(message: Buffer, mailFrom: string, to = 'aligned@ingest.test') {
    const { data } = await deliver(harness.smtpPort, { from: mailFrom, to: [to], message });
    return data?.text;
  }

  function uploadsOf(pdf: Buffer) {
    return harness.mock.uploads.filter((upload) => upload.file?.sha256 === sha256(pdf));
  }

  async function expectUploaded(reply: string | undefined, pdf: Buffer, workspace: string) {
    expect(reply).toMatch(/^250 2\.0\.0 queued as [0-9a-z]+$/);
    const id = queuedId({ code: 250, text: reply ?? '' });
    expect(await harness.settled(id, 0)).toBe('completed');
    expect(uploadsOf(pdf).map((upload) => upload.fields.workspace)).toEqual([[workspace]]);
    return id;
  }

  const notAligned = (domain: string) =>
    `550 5.7.1 sender not authenticated: the From domain ${domain} is not aligned with a passing SPF or DKIM result`;

  it('admits a message with a DKIM signature aligned with the From domain, and records why', async () => {
    const { pdf, message } = await invoice('dkim-aligned');
    const reply = await send(await dkimSignMessage(message, acme), 'bounce@elsewhere.test');
    const id = await expectUploaded(reply, pdf, 'ws-aligned');

    const record = await harness.record(id);
    expect(record.workspaces).toEqual([
      { identifier: 'ws-aligned', admitted: true, reason: null, senderAuthentication: 'aligned' },
    ]);
    expect(record.authentication).toMatchObject({
      fromDomain: 'acme.example',
      results: {
        spf: { result: 'none', domain: 'elsewhere.test' },
        dkim: [{ result: 'pass', domain: 'acme.example', selector: 'sel', unsignedBodyBytes: 0 }],
        dmarc: { result: 'none', fromDomain: 'acme.example' },
        arc: null,
      },
      verdicts: { aligned: { outcome: 'pass', via: 'dkim', domain: 'acme.example' } },
    });
  });

  it('warns at start about allow-lists anyone can satisfy by forging the From', () => {
    const warnings = harness.logs.lines
      .map((line) => JSON.parse(line) as { level: number; msg: string; workspaces?: string[] })
      .filter((line) => line.msg.startsWith('allow-lists without sender authentication'));
    expect(warnings.map((line) => [line.level, line.workspaces])).toEqual([[40, ['ws-off']]]);
  });

  it('refuses a valid DKIM signature of another domain without SPF: 550 5.7.1', async () => {
    const { pdf, message } = await invoice('dkim-other');
    const reply = await send(await dkimSignMessage(message, other), 'bounce@nospf.test');
    expect(reply).toBe(notAligned('acme.example'));
    expect(uploadsOf(pdf)).toEqual([]);
  });

  it('admits SPF passing for a MAIL FROM domain aligned with the From domain (relaxed: a subdomain)', async () => {
    const { pdf, message } = await invoice('spf-aligned');
    const reply = await send(message, 'bounce@mail.acme.example');
    const id = await expectUploaded(reply, pdf, 'ws-aligned');
    expect((await harness.record(id)).authentication?.verdicts).toEqual({
      aligned: { outcome: 'pass', via: 'spf', domain: 'mail.acme.example' },
    });
  });

  it('refuses the headline attack: a forged From of an allowed domain, SPF passing for the forger’s own', async () => {
    const { pdf, message } = await invoice('forged');
    const reply = await send(message, 'attacker@evil.test');
    expect(reply).toBe(notAligned('acme.example'));
    expect(uploadsOf(pdf)).toEqual([]);
  });

  it('keeps today’s behaviour with off: the same forged message is taken on the From alone', async () => {
    const { pdf, message } = await invoice('forged-off', 'Ann <ann@acme.example>', 'off@ingest.test');
    const asked = dns.queries.length;
    const reply = await send(message, 'attacker@evil.test', 'off@ingest.test');
    // Nothing is looked up for a message no addressed workspace authenticates.
    expect(dns.queries.length).toBe(asked);
    const id = await expectUploaded(reply, pdf, 'ws-off');
    const record = await harness.record(id);
    expect(record.authentication).toBeNull();
    expect(record.workspaces).toEqual([{ identifier: 'ws-off', admitted: true, reason: null }]);
  });

  it('admits dmarc when DMARC passes under a p=none record', async () => {
    const { pdf, message } = await invoice('dmarc-pass', 'Pat <pat@policy.example>', 'dmarc@ingest.test');
    const reply = await send(
      await dkimSignMessage(message, policy),
      'bounce@elsewhere.test',
      'dmarc@ingest.test',
    );
    const id = await expectUploaded(reply, pdf, 'ws-dmarc');
    expect((await harness.record(id)).authentication?.results.dmarc).toMatchObject({
      result: 'pass',
      fromDomain: 'policy.example',
      policy: 'none',
      dkimAligned: 'policy.example',
    });
  });

  it('refuses dmarc when DMARC fails, although p=none asks nothing of receivers', async () => {
    const { pdf, message } = await invoice('dmarc-fail', 'Pat <pat@policy.example>', 'dmarc@ingest.test');
    const reply = await send(message, 'bounce@evil.test', 'dmarc@ingest.test');
    expect(reply).toBe(
      '550 5.7.1 sender not authenticated: DMARC did not pass for the From domain policy.example (dmarc=fail)',
    );
    expect(uploadsOf(pdf)).toEqual([]);
  });

  it('counts an l= signature that covers the whole body, but not once content is appended', async () => {
    const whole = await invoice('l-whole');
    const wholeReply = await send(
      await dkimSignMessage(whole.message, acme, { bodyLength: 'l=' }),
      'b@x.test',
    );
    await expectUploaded(wholeReply, whole.pdf, 'ws-aligned');

    const { pdf, message } = await invoice('l-appended');
    const signed = await dkimSignMessage(message, acme, { bodyLength: 'l=' });
    const appended = Buffer.concat([
      signed,
      Buffer.from('\r\nAppended after signing: pay to another account.\r\n'),
    ]);
    const reply = await send(appended, 'b@x.test');
    expect(reply).toMatch(
      /^550 5\.7\.1 sender not authenticated: the From domain acme\.example is not aligned with a passing SPF or DKIM result; the DKIM signature of acme\.example does not count: its l= leaves \d+ body bytes unsigned$/,
    );
    expect(uploadsOf(pdf)).toEqual([]);
  });

  it.each([
    ['the DKIM key lookup fails with SERVFAIL', 'broken', 'b@x.test', 'the DKIM key of acme.example'],
    [
      'the SPF lookup of an aligned MAIL FROM times out',
      'none',
      'b@flaky.acme.example',
      'SPF of flaky.acme.example',
    ],
  ])('answers 451 4.7.0 when %s', async (_label, signing, mailFrom, what) => {
    const { pdf, message } = await invoice(`tempfail-${signing}`);
    const sent = signing === 'broken' ? await dkimSignMessage(message, acmeUnreachable) : message;
    const reply = await send(sent, mailFrom);
    expect(reply).toBe(
      `451 4.7.0 sender authentication failed temporarily: DNS lookup failed for ${what}; try again later`,
    );
    expect(uploadsOf(pdf)).toEqual([]);
  });

  describe('ARC', () => {
    /** acme.example → a list that tags the subject (breaking the DKIM signature) → the gateway. */
    async function viaList(label: string, sealer: SigningKey) {
      const { pdf, message } = await invoice(label);
      const sent = await arcForward(
        await dkimSignMessage(message, acme),
        {
          key: sealer,
          ip: '192.0.2.10',
          helo: 'mx.acme.example',
          mailFrom: 'bounce@acme.example',
          modify: (text) => text.replace(/^Subject: /m, 'Subject: [list] '),
        },
        dns.resolver,
      );
      return { pdf, sent };
    }

    it('admits on the first hop’s results when a trusted sealer sealed the chain', async () => {
      const { pdf, sent } = await viaList('arc-trusted', lists);
      const reply = await send(sent, 'list-bounce@lists.example');
      const id = await expectUploaded(reply, pdf, 'ws-aligned');
      expect((await harness.record(id)).authentication).toMatchObject({
        results: {
          dkim: [{ result: 'fail', domain: 'acme.example' }],
          arc: {
            result: 'pass',
            sealers: ['lists.example'],
            firstHop: { authservId: 'lists.example', dkim: [{ result: 'pass', domain: 'acme.example' }] },
          },
        },
        verdicts: { aligned: { outcome: 'pass', via: 'arc', domain: 'lists.example' } },
      });
    });

    it('refuses the same chain sealed by a sealer nobody configured', async () => {
      const { pdf, sent } = await viaList('arc-untrusted', forwarder);
      const reply = await send(sent, 'fwd@forwarder.example');
      expect(reply).toBe(
        `${notAligned('acme.example')}; its ARC chain is sealed by forwarder.example, not a trusted ARC sealer`,
      );
      expect(uploadsOf(pdf)).toEqual([]);
    });

    it('refuses a chain the attacker began: results forged at i=1, then sealed by a trusted list', async () => {
      const { pdf, message } = await invoice('arc-forged-first-hop');
      // The attacker's own "forwarder" claims SPF passed for acme.example (its Authentication-Results
      // are the attacker's word), then sends the message through the trusted list.
      const forged = await arcForward(
        message,
        { key: evil, ip: '192.0.2.10', helo: 'mx.acme.example', mailFrom: 'bounce@acme.example' },
        dns.resolver,
      );
      const sent = await arcForward(
        forged,
        { key: lists, ip: '127.0.0.1', helo: 'evil.test', mailFrom: 'attacker@evil.test' },
        dns.resolver,
      );
      const reply = await send(sent, 'list-bounce@lists.example');
      expect(reply).toBe(
        `${notAligned('acme.example')}; its ARC chain is sealed by evil.test, not a trusted ARC sealer`,
      );
      expect(uploadsOf(pdf)).toEqual([]);
    });
  });
});
