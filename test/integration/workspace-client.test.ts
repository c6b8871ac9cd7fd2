import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMockApi, type MockApi } from '@ingest-gateway/mock-parsing-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import type { WorkspaceUpdate } from '../../src/parsing-api/service-workspace.ts';
import {
  createWorkspaceClient,
  WorkspaceApiError,
  type WorkspaceClient,
} from '../../src/parsing-api/workspace-client.ts';

const API_KEY = 'client-key-0b7e44';

let mock: MockApi;
let url: string;
let client: WorkspaceClient;

beforeEach(async () => {
  mock = createMockApi({
    apiKey: API_KEY,
    logger: createLogger({ level: 'silent' }),
    workspaces: [{ identifier: 'ws 1/ä', ingestEmail: 'docs@ingest.example' }],
  });
  ({ url } = await mock.start({ host: '127.0.0.1', port: 0 }));
  client = createWorkspaceClient({ baseUrl: url, apiKey: API_KEY, timeoutMs: 10_000 });
});

afterEach(async () => {
  await client.close();
  await mock.close();
});

async function caught(promise: Promise<unknown>): Promise<WorkspaceApiError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof WorkspaceApiError))
    throw new Error(`expected a WorkspaceApiError, got ${String(error)}`);
  return error;
}

describe('createWorkspaceClient', () => {
  it('throws a refusal carrying the RequestError, its detail in the message, never the key', async () => {
    const error = await caught(
      client.updateWorkspace('ws 1/ä', { visibility: 'public' } as unknown as WorkspaceUpdate),
    );
    expect(error.kind).toBe('refused');
    expect(error.status).toBe(400);
    expect(error.requestError?.errors).toEqual([
      { attr: 'visibility', code: 'invalid_choice', detail: '"public" is not a valid choice.' },
    ]);
    expect(error.message).toContain('400: visibility: "public" is not a valid choice.');
    expect(error.message).not.toContain(API_KEY);
  });

  it('throws unreachable when nothing listens', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const closed = createWorkspaceClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: API_KEY,
      timeoutMs: 5000,
    });
    try {
      const error = await caught(closed.getWorkspace('w'));
      expect(error.kind).toBe('unreachable');
      expect(error.message).toContain('no answer');
    } finally {
      await closed.close();
    }
  });

  it.each([
    { baseUrl: 'http://api.example.com', message: /plain http/ },
    { baseUrl: 'https://user:secret@api.example.com', message: /credentials/ },
  ])('refuses $baseUrl before sending anything', ({ baseUrl, message }) => {
    expect(() => createWorkspaceClient({ baseUrl, apiKey: API_KEY, timeoutMs: 1000 })).toThrow(message);
  });

  it('allows plain http to another host only when told to', async () => {
    const insecure = createWorkspaceClient({
      baseUrl: 'http://api.example.com',
      apiKey: API_KEY,
      timeoutMs: 1000,
      allowInsecureHttp: true,
    });
    await insecure.close();
  });
});

describe('responses that are not what the API promises', () => {
  let server: Server;
  let odd: WorkspaceClient;
  let answer: { status: number; type: string; body: string };

  beforeEach(async () => {
    server = createServer((_req, res) => {
      res.writeHead(answer.status, { 'content-type': answer.type }).end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    odd = createWorkspaceClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: API_KEY, timeoutMs: 5000 });
  });

  afterEach(async () => {
    await odd.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('a 2xx that is not a Workspace is invalid_response', async () => {
    answer = { status: 200, type: 'application/json', body: '{"name": "no identifier"}' };
    const error = await caught(odd.getWorkspace('w'));
    expect(error.kind).toBe('invalid_response');
    expect(error.message).toContain('identifier');
  });

  it('a body over 1 MiB is not read but reported', async () => {
    answer = {
      status: 200,
      type: 'application/json',
      body: `{"identifier": "${'x'.repeat(2 * 1024 * 1024)}"}`,
    };
    const error = await caught(odd.getWorkspace('w'));
    expect(error.kind).toBe('invalid_response');
    expect(error.message).toContain('larger than 1048576 bytes');
  });

  it('an error page that is not a RequestError is quoted, briefly', async () => {
    answer = { status: 502, type: 'text/html', body: `<html>Bad gateway${'.'.repeat(1000)}</html>` };
    const error = await caught(odd.getWorkspace('w'));
    expect(error).toMatchObject({ kind: 'refused', status: 502, requestError: undefined });
    expect(error.message).toContain('502: <html>Bad gateway');
    expect(error.message.length).toBeLessThan(400);
  });
});
