import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { IScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import type { IPrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import type { IServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import type { IService } from 'kubernetes-models/v1/Service';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  type KubernetesObject,
  objectNamed,
  prometheusRuleFrom,
  renderComposition,
  renderKustomization,
  schemaViolations,
} from '../../harness/kubernetes-manifests.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import type { GatewayConfig } from '../../src/config/schema.ts';
import { shutdownDeadline } from '../../src/gateway.ts';
import { createMetrics } from '../../src/metrics.ts';

/**
 * deploy/kubernetes (README.md, "Kubernetes"): rendered by kubectl's kustomize as `kubectl
 * apply -k` renders it, every object checked against its kind's schema, and what an operator
 * relies on checked against the gateway itself: its configuration loader accepts the
 * ConfigMap, the probes need no token, the grace period outlasts its shutdown deadline, the
 * user is the image's, the alert rules are ops/prometheus-alerts.yaml's.
 */

const root = resolve('deploy/kubernetes');
const roles = ['smtp', 'worker'] as const;
type Role = (typeof roles)[number];
const ruleFile = `${root}/components/monitoring/prometheus-rule.yaml`;

let objects: KubernetesObject[];
beforeAll(async () => {
  objects = await renderKustomization(`${root}/overlays/example`);
});

const deployment = (role: Role) => objectNamed<IDeployment>(objects, 'Deployment', `ingest-gateway-${role}`);
const secret = () => objectNamed<ISecret>(objects, 'Secret', 'ingest-gateway');

function gatewayContainer(role: Role): IContainer {
  const container = deployment(role).spec?.template.spec?.containers.find(({ name }) => name === 'gateway');
  if (container === undefined) throw new Error(`ingest-gateway-${role} has no container named gateway`);
  return container;
}

/** A key of the Secret, decoded. */
function secretValue(key: string): string {
  const { data = {}, stringData = {} } = secret();
  const encoded = data[key];
  const value = encoded === undefined ? stringData[key] : Buffer.from(encoded, 'base64').toString('utf8');
  if (value === undefined) throw new Error(`Secret ingest-gateway has no key ${key}`);
  return value;
}

/** The container's environment as the kubelet builds it: values, and the Secret's keys. */
function environment(container: IContainer): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { name, value, valueFrom } of container.env ?? []) {
    const ref = valueFrom?.secretKeyRef;
    if (ref !== undefined) {
      expect(ref.name, name).toBe('ingest-gateway');
      env[name] = secretValue(ref.key);
    } else {
      env[name] = value ?? '';
    }
  }
  return env;
}

/** The value after `flag` in the container's arguments. */
function argument(container: IContainer, flag: string): string | undefined {
  const args = container.args ?? [];
  const at = args.indexOf(flag);
  return at < 0 ? undefined : args[at + 1];
}

/** The configuration the role's container starts with, through the gateway's own loader. */
function gatewayConfig(role: Role): GatewayConfig {
  const container = gatewayContainer(role);
  const configPath = argument(container, '--config') ?? '';
  const mount = container.volumeMounts?.find(({ mountPath }) => configPath.startsWith(`${mountPath}/`));
  const volume = deployment(role).spec?.template.spec?.volumes?.find(({ name }) => name === mount?.name);
  const configMap = objectNamed<IConfigMap>(objects, 'ConfigMap', volume?.configMap?.name ?? '');
  const text = configMap.data?.[configPath.slice(`${mount?.mountPath}/`.length)];
  if (text === undefined)
    throw new Error(`${configPath} is not in the ConfigMap ${configMap.metadata?.name}`);
  return parseConfig({ text, env: environment(container), source: `ConfigMap ${configMap.metadata?.name}` });
}

/** The container port a probe or Service names (by name or number). */
function containerPort(container: IContainer, port: number | string | undefined): number | undefined {
  return typeof port === 'number' ? port : container.ports?.find(({ name }) => name === port)?.containerPort;
}

function selects(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) {
  return (
    selector !== undefined &&
    Object.keys(selector).length > 0 &&
    Object.entries(selector).every(([key, value]) => labels?.[key] === value)
  );
}

/**
 * Every string with its runs of white space made one space. kustomize's YAML (go-yaml) reads a
 * folded block scalar's more-indented lines with one line break more than the YAML spec (and
 * the yaml package); PromQL and the annotations' readers take either alike.
 */
function collapsedWhitespace(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(/\s+/g, ' ').trim();
  if (Array.isArray(value)) return value.map(collapsedWhitespace);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, collapsedWhitespace(item)]));
  }
  return value;
}

const podLabels = (role: Role) => deployment(role).spec?.template.metadata?.labels;

describe('deploy/kubernetes, rendered', () => {
  it('renders the base, the example overlay, and the parts with the HPA instead of KEDA, all passing their schemas', async () => {
    const base = await renderKustomization(`${root}/base`);
    const withHpa = await renderComposition({
      resources: [`${root}/base`],
      components: [`${root}/components/monitoring`, `${root}/components/hpa`],
    });
    expect(schemaViolations(base)).toEqual([]);
    expect(schemaViolations(objects)).toEqual([]);
    expect(schemaViolations(withHpa)).toEqual([]);
    expect(objects.map(({ kind, metadata }) => `${kind}/${metadata.name}`).sort()).toEqual([
      'ConfigMap/ingest-gateway-config',
      'Deployment/ingest-gateway-smtp',
      'Deployment/ingest-gateway-worker',
      'Namespace/ingest-gateway',
      'PodDisruptionBudget/ingest-gateway-smtp',
      'PodDisruptionBudget/ingest-gateway-worker',
      'PrometheusRule/ingest-gateway',
      'ScaledObject/ingest-gateway-worker',
      'Secret/ingest-gateway',
      'Service/ingest-gateway-http',
      'Service/ingest-gateway-smtp',
      'ServiceMonitor/ingest-gateway',
    ]);
    const hpa = objectNamed<IHorizontalPodAutoscaler>(
      withHpa,
      'HorizontalPodAutoscaler',
      'ingest-gateway-worker',
    );
    expect(hpa.spec?.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'ingest-gateway-worker' });
    expect(withHpa.some(({ kind }) => kind === 'ScaledObject')).toBe(false);
  });

  it('finds schema violations where there are some: a port by name where a number belongs, a kind without a schema', () => {
    const broken = structuredClone(deployment('smtp')) as unknown as KubernetesObject;
    const ports = (broken as unknown as IDeployment).spec?.template.spec?.containers[0]?.ports ?? [];
    Object.assign(ports[0] ?? {}, { containerPort: 'smtp' });
    const unknown: KubernetesObject = {
      apiVersion: 'example.com/v1',
      kind: 'Gadget',
      metadata: { name: 'x' },
    };
    const violations = schemaViolations([broken, unknown]);
    expect(violations).toHaveLength(2);
    expect(violations[0]).toMatch(/^Deployment\/ingest-gateway-smtp: .*containerPort must be integer/);
    expect(violations[1]).toMatch(/^Gadget\/x: no schema/);
  });

  it.each(roles)(
    'runs `start --role %s` from the image the overlay pins, with a configuration the gateway accepts, listening on ::',
    (role) => {
      const container = gatewayContainer(role);
      expect(container.args?.[0]).toBe('start');
      expect(argument(container, '--role')).toBe(role);
      expect(container.image).toBe('registry.example.com/ingest-gateway:0.1.0');
      const config = gatewayConfig(role);
      expect(config.smtp.host).toBe('::');
      expect(config.http.host).toBe('::');
      expect(config.http.token).toBe(secretValue('http-token'));
      expect(config.redis.url).toBe(secretValue('redis-url'));
      // The API key is the Secret's file, where the pod mounts it.
      const keyFile = config.api.apiKeyFile ?? '';
      const mount = container.volumeMounts?.find(({ mountPath }) => keyFile.startsWith(`${mountPath}/`));
      const volume = deployment(role).spec?.template.spec?.volumes?.find(({ name }) => name === mount?.name);
      expect(volume?.secret?.secretName).toBe('ingest-gateway');
      const item = volume?.secret?.items?.find(({ path }) => `${mount?.mountPath}/${path}` === keyFile);
      expect(item?.key).toBe('api-key');
      expect(secretValue('api-key')).not.toBe('');
    },
  );

  it.each(roles)(
    '%s: probes /healthz (liveness) and /readyz (readiness) on the HTTP port without a token',
    (role) => {
      const container = gatewayContainer(role);
      const httpPort = gatewayConfig(role).http.port;
      for (const [probe, path] of [
        [container.livenessProbe, '/healthz'],
        [container.readinessProbe, '/readyz'],
      ] as const) {
        expect(probe?.exec).toBeUndefined();
        expect(probe?.httpGet?.path).toBe(path);
        expect(probe?.httpGet?.scheme ?? 'HTTP').toBe('HTTP');
        expect(probe?.httpGet?.httpHeaders ?? []).toEqual([]);
        expect(containerPort(container, probe?.httpGet?.port)).toBe(httpPort);
      }
    },
  );

  it.each(roles)(
    "%s: the grace period outlasts the gateway's shutdown deadline for its configuration",
    (role) => {
      const grace = deployment(role).spec?.template.spec?.terminationGracePeriodSeconds ?? 30;
      expect(grace * 1000).toBeGreaterThan(shutdownDeadline(gatewayConfig(role)));
    },
  );

  it.each(roles)(
    "%s: runs as the image's numeric non-root user, read-only, unprivileged, within resources",
    async (role) => {
      const user = /^USER (\d+):(\d+)\s*$/m.exec(await readFile('Dockerfile', 'utf8'));
      expect(user, 'the Dockerfile names its user by uid:gid').not.toBeNull();
      const [uid, gid] = [Number(user?.[1]), Number(user?.[2])];
      expect(uid).toBeGreaterThan(0);
      const pod = deployment(role).spec?.template.spec;
      expect(pod?.securityContext).toMatchObject({
        runAsNonRoot: true,
        runAsUser: uid,
        runAsGroup: gid,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      const container = gatewayContainer(role);
      expect(container.securityContext).toMatchObject({
        runAsNonRoot: true,
        runAsUser: uid,
        runAsGroup: gid,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(container.securityContext?.capabilities?.add ?? []).toEqual([]);
      expect(container.resources?.requests).toMatchObject({
        cpu: expect.any(String),
        memory: expect.any(String),
      });
      expect(container.resources?.limits).toMatchObject({ memory: expect.any(String) });
      // A subPath mount never sees the ConfigMap's or Secret's updates: no reload without a restart.
      expect(container.volumeMounts?.filter((mount) => mount.subPath !== undefined)).toEqual([]);
    },
  );

  it('exposes SMTP through a LoadBalancer that keeps the client address, to the SMTP pods only', () => {
    const service = objectNamed<IService>(objects, 'Service', 'ingest-gateway-smtp');
    expect(service.spec?.type).toBe('LoadBalancer');
    expect(service.spec?.externalTrafficPolicy).toBe('Local');
    expect(selects(service.spec?.selector, podLabels('smtp'))).toBe(true);
    expect(selects(service.spec?.selector, podLabels('worker'))).toBe(false);
    const [port] = service.spec?.ports ?? [];
    expect(port?.port).toBe(25);
    expect(containerPort(gatewayContainer('smtp'), port?.targetPort)).toBe(gatewayConfig('smtp').smtp.port);
  });

  it.each(roles)('%s: a PodDisruptionBudget covers the pods', (role) => {
    const budget = objectNamed<IPodDisruptionBudget>(
      objects,
      'PodDisruptionBudget',
      `ingest-gateway-${role}`,
    );
    expect(selects(budget.spec?.selector?.matchLabels, podLabels(role))).toBe(true);
    expect(budget.spec?.minAvailable ?? budget.spec?.maxUnavailable).toBeDefined();
  });

  it("scrapes /metrics of both roles' pods as job ingest-gateway, with the pods' own token", () => {
    const monitor = objectNamed<IServiceMonitor>(objects, 'ServiceMonitor', 'ingest-gateway');
    const service = objectNamed<IService>(objects, 'Service', 'ingest-gateway-http');
    expect(selects(monitor.spec.selector.matchLabels, service.metadata?.labels)).toBe(true);
    for (const role of roles) expect(selects(service.spec?.selector, podLabels(role)), role).toBe(true);
    // The alert rules expect the job ingest-gateway (ops/prometheus-alerts.yaml).
    expect(service.metadata?.labels?.[monitor.spec.jobLabel ?? '']).toBe('ingest-gateway');
    const [endpoint] = monitor.spec.endpoints ?? [];
    expect(endpoint?.path).toBe('/metrics');
    const servicePort = service.spec?.ports?.find(({ name }) => name === endpoint?.port);
    for (const role of roles) {
      expect(containerPort(gatewayContainer(role), servicePort?.targetPort)).toBe(
        gatewayConfig(role).http.port,
      );
    }
    expect(endpoint?.authorization?.type ?? 'Bearer').toBe('Bearer');
    const credentials = endpoint?.authorization?.credentials;
    expect(credentials?.name).toBe('ingest-gateway');
    expect(secretValue(credentials?.key ?? '')).toBe(gatewayConfig('smtp').http.token);
  });

  it('carries the alert rules of ops/prometheus-alerts.yaml, and its file is made from them', async () => {
    const alertRules = await readFile('ops/prometheus-alerts.yaml', 'utf8');
    // After a change of the rules, `npx vitest run test/deploy/kubernetes-manifests.test.ts -u`
    // writes the file anew (at the end of that run: the next run renders it).
    await expect(prometheusRuleFrom(alertRules)).toMatchFileSnapshot(ruleFile);
    const rule = objectNamed<IPrometheusRule>(objects, 'PrometheusRule', 'ingest-gateway');
    expect(collapsedWhitespace(rule.spec.groups)).toEqual(collapsedWhitespace(parse(alertRules).groups));
  });

  it('scales the workers with KEDA on the queue depth the gateway exports, in the namespace it is deployed to', async () => {
    const scaled = objectNamed<IScaledObject>(objects, 'ScaledObject', 'ingest-gateway-worker');
    expect(scaled.spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'ingest-gateway-worker' });
    const [trigger] = scaled.spec.triggers;
    expect(trigger?.type).toBe('prometheus');
    const query = trigger?.metadata.query ?? '';
    const exported = (await createMetrics().registry.getMetricsAsJSON()).map(({ name }) => name);
    const named = [...query.matchAll(/\bingest_gateway_[a-z_]+/g)].map(([name]) => name);
    expect(named).toEqual(['ingest_gateway_queue_jobs']);
    expect(exported).toContain('ingest_gateway_queue_jobs');
    expect(query).toContain(`namespace="${deployment('worker').metadata?.namespace}"`);
    expect(query).toContain('job="ingest-gateway"');
    expect(Number(trigger?.metadata.threshold)).toBeGreaterThan(0);
  });

  it('names the base image by one build argument, so a build can pin it by digest', async () => {
    const dockerfile = await readFile('Dockerfile', 'utf8');
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-slim$/m);
    const bases = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map(([, image]) => image);
    expect(bases).toHaveLength(2);
    for (const image of bases) expect(image).toMatch(/^\$\{NODE_IMAGE\}$/);
  });
});
