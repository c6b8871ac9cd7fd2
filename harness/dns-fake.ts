import { DnsLookupError, type DnsResolver } from '../src/sender/dns-resolver.ts';

/** Records by `"<RRTYPE> <name>"`, e.g. `'TXT _dmarc.acme.example': ['v=DMARC1; p=none']`. */
export type DnsTable = Record<string, readonly unknown[]>;

export interface FakeDns {
  /** The resolver to hand to the gateway: answers from the table, never from the network. */
  readonly resolver: DnsResolver;
  /** Every question asked, as `"<RRTYPE> <name>"`, in order. */
  readonly queries: string[];
  /** Add or replace a record set. TXT records are given as strings, one per record. */
  set(rrtype: string, name: string, records: readonly unknown[]): void;
  /** Every question about `name` (any type) fails with `code` from now on (ESERVFAIL, ETIMEOUT, …). */
  fail(name: string, code?: string): void;
}

/**
 * An in-memory DNS for tests, answering as node:dns does: TXT as string[][] (each record one
 * chunk), others as given; a name with no records at all is NXDOMAIN (ENOTFOUND), a name with
 * records of other types only is NODATA (ENODATA). Names compare case-insensitively and
 * without a trailing dot.
 */
export function createFakeDns(initial: DnsTable = {}): FakeDns {
  const records = new Map<string, readonly unknown[]>();
  const failures = new Map<string, string>();
  const queries: string[] = [];
  const key = (rrtype: string, name: string) => `${rrtype.toUpperCase()} ${canonical(name)}`;

  const fake: FakeDns = {
    queries,
    set(rrtype, name, answer) {
      records.set(key(rrtype, name), answer);
    },
    fail(name, code = 'ESERVFAIL') {
      failures.set(canonical(name), code);
    },
    async resolver(name, rrtype) {
      const asked = key(rrtype, name);
      queries.push(asked);
      const failure = failures.get(canonical(name));
      if (failure !== undefined) throw new DnsLookupError(name, rrtype, failure);
      const answer = records.get(asked);
      if (answer !== undefined) {
        const shaped = rrtype.toUpperCase() === 'TXT' ? answer.map((text) => [String(text)]) : answer;
        return shaped as string[][] | string[];
      }
      const exists = [...records.keys()].some((known) => known.endsWith(` ${canonical(name)}`));
      throw new DnsLookupError(name, rrtype, exists ? 'ENODATA' : 'ENOTFOUND');
    },
  };
  for (const [entry, answer] of Object.entries(initial)) {
    const [rrtype = '', name = ''] = entry.split(' ');
    fake.set(rrtype, name, answer);
  }
  return fake;
}

function canonical(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}
