import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';

/** How the server answers questions about one name (any type). */
export type DnsAnswer =
  | { rcode: 'NOERROR'; txt?: string[] }
  | { rcode: 'NXDOMAIN' | 'SERVFAIL' | 'REFUSED' }
  /** Read the question and say nothing: the client times out. */
  | { rcode: 'SILENT' };

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, as dns.servers takes it. */
  readonly address: string;
  close(): Promise<void>;
}

const RCODES = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;
const TYPE_TXT = 16;
const CLASS_IN = 1;

/**
 * A DNS server over UDP on 127.0.0.1 and a free port, for testing the real resolver (node:dns
 * with setServers) without a network: RFC 1035 §4.1 messages, one question each, TXT answers
 * for TXT questions (each record one string of at most 255 bytes), the configured RCODE for
 * everything. Names it does not know are NXDOMAIN.
 */
export async function startDnsServer(answers: Record<string, DnsAnswer>): Promise<TestDnsServer> {
  const socket: Socket = createSocket('udp4');
  socket.on('message', (query, peer) => {
    const reply = respond(query, answers);
    if (reply !== null) socket.send(reply, peer.port, peer.address);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return {
    address: `127.0.0.1:${socket.address().port}`,
    async close() {
      await new Promise<void>((resolve) => socket.close(() => resolve()));
    },
  };
}

function respond(query: Buffer, answers: Record<string, DnsAnswer>): Buffer | null {
  if (query.length < 12) return null;
  // Question: QNAME as length-prefixed labels ending in a zero byte, then QTYPE and QCLASS.
  const labels: string[] = [];
  let offset = 12;
  for (let length = query[offset] ?? 0; length > 0; length = query[offset] ?? 0) {
    labels.push(query.toString('latin1', offset + 1, offset + 1 + length));
    offset += 1 + length;
  }
  const questionEnd = offset + 5;
  if (questionEnd > query.length) return null;
  const qtype = query.readUInt16BE(offset + 1);
  const name = labels.join('.').toLowerCase();
  const answer = answers[name] ?? { rcode: 'NXDOMAIN' };
  if (answer.rcode === 'SILENT') return null;

  const records = answer.rcode === 'NOERROR' && qtype === TYPE_TXT ? (answer.txt ?? []) : [];
  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.readUInt16BE(0), 0); // the query's ID
  // QR=1, RD copied from the query, RA=1, RCODE.
  header.writeUInt16BE(0x8080 | (query.readUInt16BE(2) & 0x0100) | RCODES[answer.rcode], 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(records.length, 6);
  const body = records.map((text) => {
    const data = Buffer.from(text, 'latin1');
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0); // a pointer to the question's name
    rr.writeUInt16BE(TYPE_TXT, 2);
    rr.writeUInt16BE(CLASS_IN, 4);
    rr.writeUInt32BE(60, 6);
    rr.writeUInt16BE(data.length + 1, 10);
    return Buffer.concat([rr, Buffer.from([data.length]), data]);
  });
  return Buffer.concat([header, query.subarray(12, questionEnd), ...body]);
}
