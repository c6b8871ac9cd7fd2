import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** The gateway's Prometheus metrics, one registry per process (tests build their own). */
export interface GatewayMetrics {
  registry: Registry;
  smtpMessages: Counter<'outcome' | 'code'>;
  uploads: Counter<'outcome'>;
  uploadSeconds: Histogram;
}

export function createMetrics(): GatewayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'ingest_gateway_' });
  return {
    registry,
    smtpMessages: new Counter({
      name: 'ingest_gateway_smtp_messages_total',
      help: 'DATA transactions by outcome (accepted, refused, failed) and reply code',
      labelNames: ['outcome', 'code'],
      registers: [registry],
    }),
    uploads: new Counter({
      name: 'ingest_gateway_uploads_total',
      help: 'Upload attempts by outcome (uploaded, rejected, retry, failed, unauthorized)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    uploadSeconds: new Histogram({
      name: 'ingest_gateway_upload_seconds',
      help: 'Duration of one POST /v3/documents',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
  };
}
