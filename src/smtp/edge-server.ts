import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { SMTPConnection, type SMTPConnectionOptions } from 'smtp-server/lib/smtp-connection.js';
import type { SMTPStream } from 'smtp-server/lib/smtp-stream.js';
import { type RefusalCode, RefusalError } from '../errors.ts';
import type { RefusalStage } from '../metrics.ts';
import { type EdgeAddress, writtenInUtf8 } from './command-parameters.ts';
import { DataUnstuffingStream } from './data-unstuffing.ts';
import type { NetworkMatcher } from './network-list.ts';
import { readProxyHeader } from './proxy-header-reader.ts';
import { replyFor } from './smtp-reply.ts';

/**
 * RFC 5321 4.5.3.1.4: a command line is at most 512 octets, CRLF included. smtp-server counts
 * the line without its line ending, and holds at most this much of a line that has not ended,
 * so a client streaming one endless line costs 510 bytes, not memory without bound.
 */
export const MAX_COMMAND_LINE_OCTETS = 512;
export const MAX_COMMAND_LENGTH = MAX_COMMAND_LINE_OCTETS - 2;

/** What the edge adds to smtp-server's own session handling. */
export interface EdgeOptions {
  /** Milliseconds a session may last from connect, however busy (smtp.sessionTimeout). */
  sessionTimeout: number;
  /** The load balancers a PROXY protocol header (v1 or v2) is required from (smtp.proxyProtocolFrom). */
  trustedProxies: NetworkMatcher;
  /** Told of each v2 header refused as malformed: the balancer's address and what was wrong. */
  onProxyRefused?: (balancer: string, reason: string) => void;
  /** Told of each refusal the edge sends, for the refusals metric. */
  onRefusal?: (stage: RefusalStage, refusal: RefusalError) => void;
}

/**
 * smtp-server with the four things its options cannot express, each a small override of a
 * hook its type declarations expose (3.21):
 * - a PROXY header is expected from peers in CIDR blocks (its `useProxy` lists single
 *   addresses only), in version 1 or 2 (it reads version 1 only), and a PROXY line from
 *   anyone else ends the session;
 * - a command line over 512 octets gets `500 5.5.2` (smtp-server answers 421 and names no
 *   enhanced code) and the connection is closed, as the rest of the line cannot be resynced
 *   without reading it;
 * - a session deadline besides the idle timeout;
 * - DATA read without a JavaScript loop over every byte and a copy of it (data-unstuffing.ts).
 */
export class EdgeSmtpServer extends SMTPServer {
  readonly edge: EdgeOptions;

  constructor(options: SMTPServerOptions, edge: EdgeOptions) {
    super({ ...options, maxCommandLength: MAX_COMMAND_LENGTH });
    this.edge = edge;
  }

  /** Is this peer a load balancer that must send a PROXY header? Read by smtp-server at accept. */
  override _expectsProxyHeader(socket: Socket): boolean {
    return socket.remoteAddress !== undefined && this.edge.trustedProxies(socket.remoteAddress);
  }

  /**
   * A balancer's connection starts with a PROXY header: a v2 header is read here
   * (proxy-header-reader.ts), anything else goes to smtp-server's own v1 reader, as before v2.
   * Either way smtp-server's guard of a socket that has not reached its session (smtp.socketTimeout,
   * maxClients) holds while the header is awaited. Other peers go straight to smtp-server.
   */
  override _handleProxy(socket: Socket, callback: HandleProxyCallback): void {
    if (!this._expectsProxyHeader(socket)) {
      super._handleProxy(socket, callback);
      return;
    }
    readProxyHeader(socket, (outcome) => {
      switch (outcome.kind) {
        case 'v1':
          // On the next tick: the reader's 'readable' listener is then gone for good, so
          // smtp-server's is a new one and is told of the bytes handed back to the socket.
          process.nextTick(() => {
            if (socket.destroyed) callback(new Error('closed before a PROXY header'));
            else super._handleProxy(socket, callback);
          });
          return;
        case 'v2':
          callback(null, {
            id: sessionId(),
            ...(outcome.source
              ? { remoteAddress: outcome.source.address, remotePort: outcome.source.port }
              : {}),
          });
          return;
        case 'refused':
          this.edge.onProxyRefused?.(socket.remoteAddress ?? '', outcome.reason);
          callback(new Error(outcome.reason));
          return;
        case 'gone':
          callback(new Error(outcome.reason));
      }
    });
  }

  /** smtp-server's own connect(), with the connection class below. */
  override connect(socket: Socket | TLSSocket, socketOptions?: SMTPConnectionOptions | null): void {
    const connection = new EdgeConnection(this, socket, socketOptions, this.edge);
    this.connections.add(connection);
    connection.on('error', (err: Error) => this._onError(err));
    connection.on('connect', (data: Parameters<SMTPServer['_onClientConnect']>[0]) =>
      this._onClientConnect(data),
    );
    connection.init();
  }
}

type HandleProxyCallback = Parameters<SMTPServer['_handleProxy']>[1];

/** A session id in smtp-server's own form (80 random bits in base 32), for its log lines. */
function sessionId(): string {
  return BigInt(`0x${randomBytes(10).toString('hex')}`)
    .toString(32)
    .padStart(16, '0');
}

class EdgeConnection extends SMTPConnection {
  readonly edge: EdgeOptions;
  deadline: NodeJS.Timeout | undefined;

  constructor(
    server: SMTPServer,
    socket: Socket | TLSSocket,
    options: SMTPConnectionOptions | null | undefined,
    edge: EdgeOptions,
  ) {
    super(server, socket, options);
    this.edge = edge;
  }

  override init(): void {
    this.deadline = setTimeout(() => this.expire(), this.edge.sessionTimeout);
    this.deadline.unref();
    super.init();
  }

  override _onClose(): void {
    clearTimeout(this.deadline);
    super._onClose();
  }

  /**
   * smtp-server's parser, as smtp-server sets it up, reading DATA with data-unstuffing.ts.
   * It fails only on an over-long line (any other write error is a broken socket), for which
   * smtp-server would answer `421 Error: Command line too long`.
   */
  override _createParser(): SMTPStream {
    const parser = new DataUnstuffingStream({ maxCommandLength: this._server.options.maxCommandLength });
    parser.oncommand = (command, callback) => this._onCommand(command, callback);
    // The client shut its side (half-close, allowHalfOpen): once every command it sent has
    // been answered, the gateway closes its side too, as it would after QUIT.
    parser.on('finish', () => this.close());
    parser.on('error', () => {
      this.refuse(
        'session',
        'COMMAND_LINE_TOO_LONG',
        `line too long: a command line is at most ${MAX_COMMAND_LINE_OCTETS} octets (RFC 5321 4.5.3.1.4)`,
      );
      this.close();
    });
    return parser;
  }

  /**
   * smtp-server's MAIL and RCPT address parser, noting whether the address was written with
   * 8-bit characters: it hands hooks IDN domains decoded, so the address a hook sees cannot
   * tell `xn--bcher-kva.example` from `bücher.example` (command-parameters.ts, RFC 6531).
   */
  override _parseAddressCommand(name: string, command: Buffer | string): EdgeAddress | false {
    const parsed: EdgeAddress | false = super._parseAddressCommand(name, command);
    if (parsed) parsed.writtenInUtf8 = writtenInUtf8(command.toString());
    return parsed;
  }

  /**
   * A PROXY line from a peer not in smtp.proxyProtocolFrom: a client claiming another
   * address. One sent before the greeting already ends the session as an early talker.
   */
  handler_PROXY(_command: Buffer, callback: () => void): void {
    this.refuse('connect', 'PROXY_NOT_TRUSTED', 'PROXY protocol is not accepted from this address');
    callback();
  }

  private expire(): void {
    const seconds = Math.round(this.edge.sessionTimeout / 1000);
    this.refuse(
      'session',
      'SESSION_TIME_EXCEEDED',
      `session longer than ${seconds} s, closing; try again later`,
    );
  }

  /** Send the reply smtp-reply.ts maps the code to; a 421 also closes the connection (smtp-server). */
  private refuse(stage: RefusalStage, code: RefusalCode, message: string): void {
    const refusal = new RefusalError(code, message);
    this.edge.onRefusal?.(stage, refusal);
    const reply = replyFor(refusal);
    this.send(reply.responseCode, reply.message);
  }
}
