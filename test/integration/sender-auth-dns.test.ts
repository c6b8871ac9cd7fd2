import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../harness/dns-server.ts';
import { composeMessage } from '../../harness/messages.ts';
import { createSenderAuthenticator } from '../../src/sender/authenticate-sender.ts';
import { createDnsResolver, DnsLookupError } from '../../src/sender/dns-resolver.ts';

/**
 * The real resolver (node:dns with dns.servers) against a DNS server on loopback: the answers
 * mailauth reads, and the error codes it tells permanent from temporary by.
 */
describe('createDnsResolver', () => {
  let server: TestDnsServer;

  beforeAll(async () => {
    server = await startDnsServer({
      'spf.test': { rcode: 'NOERROR', txt: ['v=spf1 ip4:127.0.0.1 -all'] },
      'empty.test': { rcode: 'NOERROR' },
      'broken.test': { rcode: 'SERVFAIL' },
      'refusing.test': { rcode: 'REFUSED' },
      'silent.test': { rcode: 'SILENT' },
    });
  });
  afterAll(async () => server?.close());

  /**
   * The server is in this process: a turn of its event loop held up past `timeout` reads as
   * no answer. So only the silent name, which nothing answers, is given a short one.
   */
  const resolver = (timeout = 10_000) => createDnsResolver({ servers: [server.address], timeout, tries: 1 });

  it('answers TXT as node:dns does: one array of chunks per record', async () => {
    expect(await resolver()('spf.test', 'TXT')).toEqual([['v=spf1 ip4:127.0.0.1 -all']]);
  });

  it.each([
    ['NXDOMAIN', 'missing.test', 'ENOTFOUND', false],
    ['NOERROR without records', 'empty.test', 'ENODATA', false],
    ['SERVFAIL', 'broken.test', 'ESERVFAIL', true],
    ['REFUSED', 'refusing.test', 'EREFUSED', true],
    ['no answer', 'silent.test', 'ETIMEOUT', true],
  ])('%s (%s) → %s', async (_label, name, code, temporary) => {
    const error = await resolver(code === 'ETIMEOUT' ? 200 : undefined)(name, 'TXT').catch(
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(DnsLookupError);
    expect(error).toMatchObject({ code, temporary });
  });

  it('gives mailauth what it needs to tell SPF pass from a temporary error', async () => {
    const authenticator = createSenderAuthenticator({ resolver: resolver(), hostname: 'gateway.test' });
    const message = await composeMessage({ from: 'ann@spf.test' });
    const spfFor = async (mailFrom: string) => {
      const run = authenticator.start({ remoteAddress: '127.0.0.1', helo: 'client.test', mailFrom });
      run.input.end(message);
      return (await run.evidence).results.spf;
    };
    expect(await spfFor('bounce@spf.test')).toEqual({ result: 'pass', domain: 'spf.test' });
    expect(await spfFor('bounce@broken.test')).toEqual({ result: 'temperror', domain: 'broken.test' });
    expect(await spfFor('bounce@missing.test')).toEqual({ result: 'none', domain: 'missing.test' });
  });
});
