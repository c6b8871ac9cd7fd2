import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { Document, parseAllDocuments } from 'yaml';

/**
 * deploy/kubernetes as Kubernetes receives it: rendered by kustomize (kubectl's, as
 * `kubectl apply -k` renders it) and each object checked against its kind's schema
 * (kubernetes-models: the Kubernetes OpenAPI schemas, and the CRDs of Prometheus Operator and
 * KEDA, as JSON Schema).
 */

const run = promisify(execFile);

/** One rendered object; its fields are read through the schema-checked model types. */
export interface KubernetesObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** `kubectl kustomize DIR`, parsed. kubectl's kustomize is what `kubectl apply -k` runs. */
export async function renderKustomization(directory: string): Promise<KubernetesObject[]> {
  let stdout: string;
  try {
    ({ stdout } = await run('kubectl', ['kustomize', directory], { maxBuffer: 16 * 1024 * 1024 }));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new Error(
        'kubectl (with its built-in kustomize, v5 or later) is needed to render deploy/kubernetes',
      );
    }
    throw error;
  }
  return parseAllDocuments(stdout).map((document) => {
    if (document.errors.length > 0)
      throw new Error(`kustomize printed bad YAML: ${document.errors[0]?.message}`);
    return document.toJS() as KubernetesObject;
  });
}

/**
 * Renders a kustomization written for the test from the shipped parts (`resources` and
 * `components` by absolute path), as an operator's own overlay combines them. Kustomize takes
 * only relative paths, so they are written relative to the temporary directory.
 */
export async function renderComposition(parts: {
  resources: string[];
  components: string[];
}): Promise<KubernetesObject[]> {
  const directory = await mkdtemp(join(tmpdir(), 'kustomization-'));
  try {
    const kustomization = new Document({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: parts.resources.map((path) => relative(directory, path)),
      components: parts.components.map((path) => relative(directory, path)),
    });
    await writeFile(join(directory, 'kustomization.yaml'), kustomization.toString());
    return await renderKustomization(directory);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** The schema of every kind deploy/kubernetes holds, by `apiVersion/kind`. */
const models: Record<string, new (data: never) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
};

/** Each object's schema violations, `Kind/name: message`; an object of a kind without a schema is one too. */
export function schemaViolations(objects: readonly KubernetesObject[]): string[] {
  const violations: string[] = [];
  for (const object of objects) {
    const name = `${object.kind}/${object.metadata?.name}`;
    const Model = models[`${object.apiVersion}/${object.kind}`];
    if (Model === undefined) {
      violations.push(`${name}: no schema known for ${object.apiVersion} ${object.kind}`);
      continue;
    }
    try {
      new Model(asTheApiServerReadsIt(object) as never).validate();
    } catch (error) {
      violations.push(`${name}: ${(error as Error).message}`);
    }
  }
  return violations;
}

/**
 * kustomize wraps a Secret's long base64 values at 76 columns; the API server's decoder (Go's
 * encoding/base64) skips line breaks, the schema's `byte` format does not.
 */
function asTheApiServerReadsIt(object: KubernetesObject): KubernetesObject {
  const data = object.data;
  if (object.apiVersion !== 'v1' || object.kind !== 'Secret' || typeof data !== 'object' || data === null) {
    return object;
  }
  const unwrapped = Object.entries(data).map(([key, value]) => [key, String(value).replace(/[\r\n]/g, '')]);
  return { ...object, data: Object.fromEntries(unwrapped) };
}

/**
 * The PrometheusRule of deploy/kubernetes/components/monitoring, made from the rule file
 * ops/prometheus-alerts.yaml (the one source of the rules): its `groups:` and everything after,
 * as written there (comments and block scalars too), indented under the object's `spec:`.
 * Indenting every line alike leaves each value as it was, block scalars included.
 */
export function prometheusRuleFrom(alertRulesText: string): string {
  const groups = alertRulesText.slice(alertRulesText.search(/^groups:/m));
  if (!groups.startsWith('groups:')) throw new Error('the rule file has no top-level groups:');
  const header = [
    '# Generated from ops/prometheus-alerts.yaml by test/deploy/kubernetes-manifests.test.ts: edit',
    '# the rules there, then run `npx vitest run test/deploy/kubernetes-manifests.test.ts -u`.',
    '# Your Prometheus may select rules by a label (its ruleSelector, e.g. release: prometheus):',
    '# add it in your overlay.',
    'apiVersion: monitoring.coreos.com/v1',
    'kind: PrometheusRule',
    'metadata:',
    '  name: ingest-gateway',
    'spec:',
  ];
  const indented = groups.split('\n').map((line) => (line === '' ? line : `  ${line}`));
  return `${[...header, ...indented].join('\n').trimEnd()}\n`;
}

/**
 * The object of that kind and name, typed as its model (the caller has checked the objects
 * against their schemas); throws when it is not there.
 */
export function objectNamed<T>(objects: readonly KubernetesObject[], kind: string, name: string): T {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  if (found === undefined) throw new Error(`no ${kind}/${name} among ${objects.map(describe).join(', ')}`);
  return found as unknown as T;
}

function describe(object: KubernetesObject): string {
  return `${object.kind}/${object.metadata.name}`;
}
