import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { readyzAnswers } from '../../harness/http-state.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { createOpenApiCheck, type OpenApiCheck, type OpenApiDocument } from '../../harness/openapi-check.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';

const token = 'http-token-for-the-auth-test-7c1e';

/**
 * The HTTP API on a non-loopback address (0.0.0.0, reached here through 127.0.0.1): every
 * endpoint but the probes (/healthz, /readyz) wants `Authorization: Bearer <http.token>`, the
 * raw e-mail and /metrics included.
 */
describe('HTTP API token', () => {
  let harness: Harness;
  let base: string;
  let messageId: string;
  let documentIdentifier: string;
  /** The checker of the gateway's own GET /v1/openapi.json: every refusal is documented. */
  let api: OpenApiCheck;

  beforeAll(async () => {
    harness = await startHarness({ http: { host: '0.0.0.0', token } });
    base = harness.httpUrl.replace('0.0.0.0', '127.0.0.1');
    const described = await fetch(`${base}/v1/openapi.json`, {
      headers: { authorization: `Bearer ${token}` },
    });
    api = createOpenApiCheck((await described.json()) as OpenApiDocument);
    const message = await composeMessage({
      from: 'Ann <ann@acme.example>',
      attachments: [{ filename: 'auth.pdf', content: uniquePdf('http-auth') }],
    });
    const { data } = await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message });
    messageId = queuedId(data);
    expect(await harness.settled(messageId, 0)).toBe('completed');
    documentIdentifier = harness.mock.uploads[0]?.documentIdentifier ?? '';
  });
  afterAll(async () => harness?.close());

  const paths = () => [
    '/metrics',
    `/v1/messages/${messageId}`,
    `/v1/messages/${messageId}/raw`,
    `/v1/documents/${documentIdentifier}`,
    '/v1/messages/unknown',
    '/v1/messages?q=auth',
    '/v1/uploads?state=failed',
    '/v1/openapi.json',
    '/no/such/route',
  ];

  it('listens beyond loopback', () => {
    expect(harness.httpUrl).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
  });

  it('answers /healthz without a token', async () => {
    const response = await fetch(`${base}/healthz`);
    expect(response.status).toBe(200);
    await api.check('GET', `${base}/healthz`, response);
  });

  it('answers /readyz without a token: the component states, not the durability facts', async () => {
    const response = await fetch(`${base}/readyz`);
    expect(response.status).toBe(200);
    expect(await api.check('GET', `${base}/readyz`, response)).toEqual({
      ready: true,
      redis: 'ok',
      smtp: 'listening',
      worker: 'running',
      connections: { intake: 'ready', queue: 'ready', worker: 'ready' },
    });
  });

  it('gives the durability facts of /readyz to a token holder', async () => {
    const response = await fetch(`${base}/readyz`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    const body = await api.check('GET', `${base}/readyz`, response);
    expect(body).toMatchObject({ ready: true, durability: { redisVersion: expect.any(String) } });
  });

  it.each([
    ['no Authorization header', undefined],
    ['a wrong token', `Bearer ${token.slice(0, -1)}x`],
    ['a longer token', `Bearer ${token}0`],
    ['the token as Basic credentials', `Basic ${Buffer.from(`user:${token}`).toString('base64')}`],
    ['the token without a scheme', token],
  ])('refuses every other endpoint with 401 for %s', async (_case, authorization) => {
    for (const path of paths()) {
      const response = await fetch(`${base}${path}`, {
        headers: authorization === undefined ? {} : { authorization },
      });
      expect(response.status, path).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="ingest-gateway"');
      await api.check('GET', `${base}${path}`, response.clone());
      const body = await response.text();
      expect(body).not.toContain(messageId);
      expect(body).not.toContain('%PDF');
    }
  });

  it('serves every endpoint with the token', async () => {
    const statuses = await Promise.all(
      paths().map(async (path) => {
        const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
        return [path, response.status] as const;
      }),
    );
    expect(Object.fromEntries(statuses)).toEqual({
      '/metrics': 200,
      [`/v1/messages/${messageId}`]: 200,
      [`/v1/messages/${messageId}/raw`]: 200,
      [`/v1/documents/${documentIdentifier}`]: 200,
      '/v1/messages/unknown': 404,
      '/v1/messages?q=auth': 200,
      '/v1/uploads?state=failed': 200,
      '/v1/openapi.json': 200,
      '/no/such/route': 404,
    });
  });

  it.each([
    ['DELETE', '/v1/messages'],
    ['POST', '/v1/uploads/retry'],
    ['POST', '/v1/uploads/some-job-0/retry'],
  ])('refuses %s %s without the token, before anything else', async (method, path) => {
    const response = await fetch(`${base}${path}`, { method });
    expect(response.status).toBe(401);
    await api.check(method, `${base}${path}`, response);
  });

  it('serves the raw e-mail (the record’s sourceEmail) to a token holder', async () => {
    const response = await fetch(`${base}/v1/messages/${messageId}/raw`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(response.headers.get('content-type')).toBe('message/rfc822');
    expect(await response.text()).toContain('From: Ann <ann@acme.example>');
  });

  // Last: it takes Redis away.
  it('answers /readyz 503 without a token while Redis is away, and 200 once it is back', async () => {
    await harness.redis.stop();
    const away = await readyzAnswers(base, 503);
    expect(away.body).toMatchObject({
      ready: false,
      redis: 'unreachable',
      smtp: 'listening',
      worker: 'running',
    });
    expect(away.body).not.toHaveProperty('durability');
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    await harness.redis.start();
    expect((await readyzAnswers(base, 200)).body).toMatchObject({ ready: true, redis: 'ok' });
    // Mail flows again (this Redis kept nothing over the restart): the gateway closes cleanly after.
    const message = await composeMessage({
      attachments: [{ filename: 'back.pdf', content: uniquePdf('http-auth-back') }],
    });
    const { data } = await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message });
    expect(await harness.settled(queuedId(data), 0)).toBe('completed');
  });
});

/**
 * The HTTP API of a configuration whose http section names no host (the harness adds only
 * `port: 0`): the default host is proven in test/unit/config/load-config.test.ts, this proves
 * the gateway listens where that default says.
 */
describe('HTTP API on loopback without a token', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({ http: { host: undefined } });
  });
  afterAll(async () => harness?.close());

  it('binds to 127.0.0.1 when http.host is not set, and asks for no token there', async () => {
    expect(harness.config.http.host).toBe('127.0.0.1');
    expect(harness.httpUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${harness.httpUrl}/readyz`)).status).toBe(200);
  });

  it('refuses DELETE /v1/messages with 403 while http.allowReset is off (the default), erasing nothing', async () => {
    const message = await composeMessage({
      attachments: [{ filename: 'kept.pdf', content: uniquePdf('kept') }],
    });
    const id = queuedId((await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message })).data);
    const response = await fetch(`${harness.httpUrl}/v1/messages`, { method: 'DELETE' });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({
      error: 'DELETE /v1/messages is off: set http.allowReset: true (test setups only)',
    });
    expect((await harness.record(id)).id).toBe(id);
  });

  it('answers 405 naming the allowed methods for a method a route does not take', async () => {
    const response = await fetch(`${harness.httpUrl}/v1/uploads/retry`);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });
});
