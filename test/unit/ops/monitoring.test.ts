import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import * as z from 'zod';
import { createMetrics } from '../../../src/metrics.ts';

const run = promisify(execFile);

/**
 * ops/: the alerting rules and the Grafana dashboard shipped for the gateway's metrics. Both
 * may name only metrics the gateway exports, and the dashboard shows every one of them.
 * promtool (Debian's `prometheus` package; .ci/run installs it) checks and unit-tests the rules.
 * Every alert has its section in docs/runbook.md.
 */

const alertRules = z.object({
  groups: z.array(
    z.object({
      name: z.string(),
      rules: z.array(
        z.object({
          alert: z.string().regex(/^IngestGateway[A-Za-z]+$/),
          expr: z.string().min(1),
          for: z.string().regex(/^\d+[smh]$/),
          labels: z.object({ severity: z.enum(['critical', 'warning', 'info']) }),
          annotations: z.object({
            runbook_url: z.string().regex(/^docs\/runbook\.md#[a-z]+$/),
            summary: z.string().min(1),
            description: z.string().min(1),
          }),
        }),
      ),
    }),
  ),
});

const target = z.object({ refId: z.string(), expr: z.string().min(1) });
const panel = z.object({
  id: z.number().int().positive(),
  type: z.enum(['row', 'stat', 'timeseries', 'gauge', 'table']),
  title: z.string().min(1),
  gridPos: z.object({
    x: z.number().int().min(0).max(23),
    y: z.number().int().min(0),
    w: z.number().int().min(1).max(24),
    h: z.number().int().min(1),
  }),
  targets: z.array(target).optional(),
});
const dashboard = z.object({
  title: z.string().min(1),
  uid: z.string().regex(/^[a-zA-Z0-9_-]{1,40}$/),
  schemaVersion: z.number().int(),
  panels: z.array(panel).min(1),
  templating: z.object({ list: z.array(z.object({ name: z.string(), type: z.string() })) }),
});

/** Every metric name the gateway's registry exports, and those of prom-client's defaults. */
async function exported(): Promise<{ all: Set<string>; own: Set<string> }> {
  const names = async (registry: Registry) =>
    (await registry.getMetricsAsJSON()).map((metric) => metric.name);
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults, prefix: 'ingest_gateway_' });
  const defaultNames = new Set(await names(defaults));
  const all = new Set(await names(createMetrics().registry));
  return { all, own: new Set([...all].filter((name) => !defaultNames.has(name))) };
}

/** The anchors of a Markdown document's `##` headings, as GitHub makes them (lower case). */
function anchors(markdown: string): Set<string> {
  return new Set(
    [...markdown.matchAll(/^## (.+)$/gm)].map(([, title]) => (title ?? '').trim().toLowerCase()),
  );
}

/** Prometheus's own series for whether a scrape of the gateway (job ingest-gateway) succeeded. */
const targetUp = /^up\{job="ingest-gateway"\} == 0$/;

/** The metric names a PromQL expression reads; a histogram's series read as the histogram. */
function metricsIn(expr: string): string[] {
  return [...expr.matchAll(/\bingest_gateway_[a-z0-9_]+/g)].map(([name]) =>
    name.replace(/_(bucket|sum|count)$/, ''),
  );
}

async function promtool(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run('promtool', args, { cwd: 'ops' });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const failed = err as NodeJS.ErrnoException & {
      stdout?: string;
      stderr?: string;
      code?: number | string;
    };
    if (failed.code === 'ENOENT') {
      throw new Error("promtool is not installed: install Debian's prometheus package (.ci/run does)");
    }
    return { stdout: failed.stdout ?? '', stderr: failed.stderr ?? '', code: Number(failed.code) };
  }
}

describe('ops/prometheus-alerts.yaml', () => {
  it('alerts on Redis down, a refused API key, the queue backing up, failing uploads, a target down, failed uploads piling up, event-loop lag, a scanner that does not answer and a stale route table from the service', async () => {
    const rules = alertRules.parse(parse(await readFile('ops/prometheus-alerts.yaml', 'utf8')));
    const alerts = rules.groups.flatMap((group) => group.rules.map((rule) => rule.alert));
    expect(alerts).toEqual(
      expect.arrayContaining([
        'IngestGatewayRedisDown',
        'IngestGatewayApiKeyRefused',
        'IngestGatewayQueueBackingUp',
        'IngestGatewayUploadsFailing',
        'IngestGatewayTargetDown',
        'IngestGatewayFailedUploadsPilingUp',
        'IngestGatewayEventLoopLag',
        'IngestGatewayScannerUnavailable',
        'IngestGatewayDiscoveryStale',
      ]),
    );
  });

  it('names only metrics the gateway exports', async () => {
    const { all } = await exported();
    const rules = alertRules.parse(parse(await readFile('ops/prometheus-alerts.yaml', 'utf8')));
    for (const rule of rules.groups.flatMap((group) => group.rules)) {
      if (targetUp.test(rule.expr)) continue;
      const named = metricsIn(rule.expr);
      expect(named.length, rule.alert).toBeGreaterThan(0);
      for (const name of named) expect(all.has(name), `${rule.alert}: ${name}`).toBe(true);
    }
  });

  it('reads `up` only for the target-down alert', async () => {
    const rules = alertRules.parse(parse(await readFile('ops/prometheus-alerts.yaml', 'utf8')));
    const reading = rules.groups.flatMap((group) => group.rules).filter((rule) => /\bup\b/.test(rule.expr));
    expect(reading.map((rule) => [rule.alert, targetUp.test(rule.expr)])).toEqual([
      ['IngestGatewayTargetDown', true],
    ]);
  });

  it('points every alert at its own section of docs/runbook.md', async () => {
    const rules = alertRules.parse(parse(await readFile('ops/prometheus-alerts.yaml', 'utf8')));
    const sections = anchors(await readFile('docs/runbook.md', 'utf8'));
    for (const rule of rules.groups.flatMap((group) => group.rules)) {
      expect(rule.annotations.runbook_url, rule.alert).toBe(`docs/runbook.md#${rule.alert.toLowerCase()}`);
      expect(sections.has(rule.alert.toLowerCase()), rule.alert).toBe(true);
    }
  });

  it('passes promtool check rules and the rule unit tests', async () => {
    const checked = await promtool('check', 'rules', 'prometheus-alerts.yaml');
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    const tested = await promtool('test', 'rules', 'prometheus-alerts.test.yaml');
    expect(tested.code, tested.stdout + tested.stderr).toBe(0);
    expect(tested.stdout).toContain('SUCCESS');
  });
});

describe('ops/grafana-dashboard.json', () => {
  it('is a dashboard: unique panel ids, panels within the 24-column grid, a query per panel', async () => {
    const parsed = dashboard.parse(JSON.parse(await readFile('ops/grafana-dashboard.json', 'utf8')));
    const ids = parsed.panels.map((each) => each.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const each of parsed.panels) {
      expect(each.gridPos.x + each.gridPos.w, each.title).toBeLessThanOrEqual(24);
      if (each.type !== 'row') expect(each.targets?.length, each.title).toBeGreaterThan(0);
    }
    expect(parsed.templating.list.map((variable) => variable.name)).toEqual(['datasource', 'job']);
  });

  it('has a panel for every metric the gateway exports, and names no other', async () => {
    const { all, own } = await exported();
    const parsed = dashboard.parse(JSON.parse(await readFile('ops/grafana-dashboard.json', 'utf8')));
    const shown = new Set(
      parsed.panels.flatMap((each) => (each.targets ?? []).flatMap((query) => metricsIn(query.expr))),
    );
    expect([...own].filter((name) => !shown.has(name))).toEqual([]);
    expect([...shown].filter((name) => !all.has(name))).toEqual([]);
  });
});

describe('the exposition', () => {
  it('passes promtool check metrics without a single problem', async () => {
    const metrics = createMetrics();
    metrics.smtpRefusals.inc({ stage: 'rcpt', reason: 'recipient_unknown' });
    metrics.uploadSeconds.observe(0.2);
    metrics.observe({ redisUp: () => true, uploadsPaused: () => null });
    const text = await metrics.registry.metrics();
    const checked = await new Promise<string>((resolve, reject) => {
      const child = execFile('promtool', ['check', 'metrics'], (err, stdout, stderr) => {
        const code = (err as NodeJS.ErrnoException | null)?.code;
        if (code === 'ENOENT')
          reject(new Error("promtool is not installed: install Debian's prometheus package"));
        else resolve(stdout + stderr);
      });
      child.stdin?.end(text);
    });
    const problems = checked.split('\n').filter((line) => line.trim() !== '');
    expect(problems).toEqual([]);
    // The per-type gauges stay: the totals that were left out are their sums.
    expect(text).toContain('# TYPE ingest_gateway_nodejs_active_handles gauge');
    expect(text).not.toContain('_total gauge');
  });
});
