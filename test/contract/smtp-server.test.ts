import { existsSync, readFileSync } from 'node:fs';
import { SMTPServer } from 'smtp-server';
import { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';
import { SMTPStream } from 'smtp-server/lib/smtp-stream.js';
import { describe, expect, it } from 'vitest';
import {
  declaredVersion,
  EXACT_VERSION,
  installedFile,
  installedManifest,
  projectFile,
} from '../../harness/pinned-version.ts';
import { PROXY_REFUSAL_LINE } from '../../src/smtp/proxy-header-reader.ts';

/**
 * What src/smtp/edge-server.ts and src/smtp/data-unstuffing.ts take from smtp-server's
 * internals (docs/overrides.md, "smtp-server"). Each test names one thing they rely on; an
 * upgrade that changes it fails here, before it changes the gateway's SMTP behaviour.
 * test/unit/smtp/data-unstuffing.test.ts holds the DATA reader to smtp-server's own byte for
 * byte, and the smtp-limits integration tests hold the edge's replies.
 */

/** A method's source on one line, for comparing the statements the subclasses repeat. */
function sourceOf(method: unknown): string {
  if (typeof method !== 'function') throw new Error('not a method');
  return Function.prototype.toString.call(method).replace(/\s+/g, ' ');
}

describe('smtp-server, as the gateway subclasses it', () => {
  it('is installed at the exact version package.json pins', () => {
    expect(declaredVersion('smtp-server')).toMatch(EXACT_VERSION);
    expect(installedManifest('smtp-server').version).toBe(declaredVersion('smtp-server'));
  });

  it('still maps the lib/ paths the gateway imports to its ES module build', () => {
    const exports = installedManifest('smtp-server').exports as Record<string, { import?: string }>;
    expect(exports['./lib/*.js']?.import).toBe('./dist/esm/*.js');
    expect(typeof SMTPConnection).toBe('function');
    expect(typeof SMTPStream).toBe('function');
  });

  it('connect() is the four statements EdgeSmtpServer.connect repeats with its own connection class', () => {
    const body = sourceOf(SMTPServer.prototype.connect);
    expect(body).toContain('= new SMTPConnection(this, socket, socketOptions);');
    expect(body).toContain('this.connections.add(connection);');
    expect(body).toContain(`connection.on('error', err => this._onError(err));`);
    expect(body).toContain(`connection.on('connect', data => this._onClientConnect(data));`);
    expect(body).toContain('connection.init();');
    expect(body.match(/;/g)).toHaveLength(5);
  });

  it('asks _expectsProxyHeader(socket) before it reads a PROXY header, at accept and in _handleProxy', () => {
    const server = SMTPServer.prototype as unknown as Record<string, unknown>;
    expect(typeof server._expectsProxyHeader).toBe('function');
    expect(sourceOf(server._acceptSocket)).toContain('this._expectsProxyHeader(socket)');
    expect(sourceOf(server._handleProxy)).toContain('this._expectsProxyHeader(socket)');
    expect(typeof server._onClientConnect).toBe('function');
    expect(typeof server._onError).toBe('function');
  });

  it('hands each accepted socket to _handleProxy(socket, callback), which EdgeSmtpServer overrides for v2', () => {
    // The accept handler: the callback's options go to connect() unless it fails.
    const accept = sourceOf(SMTPServer);
    expect(accept).toContain('this._handleProxy(socket, (err, socketOptions) => {');
    expect(accept).toContain('this.connect(socket, socketOptions);');
    // A connection takes the client's address and port from those options, the socket's otherwise.
    const connection = sourceOf(SMTPConnection);
    expect(connection).toContain('normalizeAddress(options.remoteAddress || this._socket.remoteAddress)');
    expect(connection).toContain('Number(options.remotePort || this._socket.remotePort)');
    // A socket awaiting its header is guarded by smtp.socketTimeout, which the v2 reader relies on.
    expect(sourceOf((SMTPServer.prototype as unknown as Record<string, unknown>)._acceptSocket)).toContain(
      'socket.setTimeout(socketTimeout(this.options), onTimeout)',
    );
    // The v1 reader's refusal, which the v2 reader sends alike (proxy-header-reader.ts).
    const handleProxy = sourceOf((SMTPServer.prototype as unknown as Record<string, unknown>)._handleProxy);
    expect(handleProxy).toContain(`socket.end(${JSON.stringify(PROXY_REFUSAL_LINE).replaceAll('"', "'")})`);
    expect(handleProxy).toContain("socket.on('readable', socketReader)");
  });

  it('_createParser() builds what EdgeConnection._createParser builds, bar the error answer', () => {
    const body = sourceOf(SMTPConnection.prototype._createParser);
    expect(body).toContain('new SMTPStream({ maxCommandLength: this._server.options.maxCommandLength })');
    expect(body).toContain('parser.oncommand = (command, callback) => this._onCommand(command, callback);');
    expect(body).toContain(`parser.on('error', err => {`);
    expect(body).toContain(`this.send(421, 'Error: ' + err.message);`);
  });

  it('makes its parser with _createParser() and has the init() and _onClose() EdgeConnection extends', () => {
    expect(sourceOf(SMTPConnection)).toContain('this._parser = this._createParser();');
    expect(sourceOf(SMTPConnection.prototype.init)).toContain('this._setListeners(');
    expect(sourceOf(SMTPConnection.prototype._onCloseEvent)).toContain('this._onClose();');
    expect(typeof SMTPConnection.prototype.send).toBe('function');
  });

  it('parses MAIL and RCPT with _parseAddressCommand, giving hooks an IDN domain decoded (EdgeConnection notes the raw form)', () => {
    expect(sourceOf(SMTPConnection.prototype.handler_MAIL)).toContain(
      `this._parseAddressCommand('mail from', command)`,
    );
    expect(sourceOf(SMTPConnection.prototype.handler_RCPT)).toContain(
      `this._parseAddressCommand('rcpt to', command)`,
    );
    const connection = { _server: { options: {}, logger: { error: () => undefined } } };
    const parse = (line: string) =>
      SMTPConnection.prototype._parseAddressCommand.call(connection, 'rcpt to', line);
    expect(parse('RCPT TO:<orders@xn--bcher-kva.example> FOO=bar')).toEqual({
      address: 'orders@bücher.example',
      args: { FOO: 'bar' },
    });
    // Parameters it does not know reach the hooks: the gateway answers them (command-parameters.ts).
    expect(parse('RCPT TO:<a@b.example> NOTIFY=SUCCESS')).toMatchObject({ args: { NOTIFY: 'SUCCESS' } });
  });

  it('finds a command handler as handler_<COMMAND>, so handler_PROXY answers a PROXY line', () => {
    const handler = () => undefined;
    const connection = { handler_PROXY: handler };
    expect(SMTPConnection.prototype._getHandler.call(connection, 'PROXY')).toBe(handler);
    expect(sourceOf(SMTPConnection.prototype._onCommand)).toContain('this._getHandler(commandName)');
  });

  it('keeps the DATA state DataUnstuffingStream reads and writes in the fields it names', () => {
    const stream = new SMTPStream({ maxCommandLength: 510 });
    expect(stream._lastBytes).toBe(false);
    expect(stream._dataStream).toBeNull();
    const data = stream.startDataMode(1000);
    expect(stream._atDataStart).toBe(true);
    expect(stream._dataStream).toBe(data);
    const write = sourceOf(Object.getOwnPropertyDescriptor(SMTPStream.prototype, '_write')?.value);
    expect(write).toContain('this._feedDataStream(chunk, done)');
    for (const name of ['_feedDataStream', '_endDataMode', '_countDataBytes'] as const) {
      expect(typeof SMTPStream.prototype[name]).toBe('function');
    }
    expect(sourceOf(SMTPStream.prototype._endDataMode)).toContain('this._dataStream = null');
    data.resume();
  });

  it('has the patch of patches/ for the pinned version, the one the patch was made for', () => {
    // patch-package applies a patch only to the version its name carries.
    expect(existsSync(projectFile(`patches/smtp-server+${declaredVersion('smtp-server')}.patch`))).toBe(true);
  });

  it('waits options.greetingDelay before the banner (the patch), 100 ms when it is not a number', () => {
    const waited = 'let readyTimer = setTimeout(() => this.connectionReady(), greetingDelay);';
    const delay =
      "let greetingDelay = typeof this._server.options.greetingDelay === 'number' ? this._server.options.greetingDelay : 100;";
    // The ES module build is what the gateway and its bundle load; the CommonJS one is patched alike.
    for (const build of ['esm', 'cjs']) {
      const lib = readFileSync(installedFile('smtp-server', `dist/${build}/smtp-connection.js`), 'utf8');
      expect(lib).toContain(delay);
      expect(lib).toContain(waited);
      expect(lib).not.toContain('setTimeout(() => this.connectionReady(), 100)');
    }
    expect(sourceOf(SMTPConnection.prototype.init)).toContain(waited);
    // The early talker's answer the delay exists for.
    expect(sourceOf(SMTPConnection.prototype._onCommand)).toContain(`' You talk too soon'`);
  });

  it('answers a client that half-closed while the socket is writable (the patch), not only while open', () => {
    for (const build of ['esm', 'cjs']) {
      const lib = readFileSync(installedFile('smtp-server', `dist/${build}/smtp-connection.js`), 'utf8');
      expect(lib).toContain('!this._socket.destroyed && this._socket.writable) {');
      expect(lib).not.toContain("this._socket.readyState === 'open'");
    }
    expect(sourceOf(SMTPConnection.prototype.send)).toContain('this._socket.writable');
  });
});
