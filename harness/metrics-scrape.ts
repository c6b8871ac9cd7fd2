/**
 * GET /metrics over HTTP, read as the Prometheus server reads it: one sample per line,
 * `name{labels} value`, by the series as written (labels in the order the gateway declares
 * them).
 */
export interface Scrape {
  /** The exposition text as served. */
  text: string;
  /** Value of one series, e.g. `ingest_gateway_redis_up` or `…_total{outcome="queued"}`; undefined when absent. */
  value(series: string): number | undefined;
  /** Every series of one metric name. */
  series(name: string): string[];
}

export async function scrape(httpUrl: string): Promise<Scrape> {
  const response = await fetch(`${httpUrl}/metrics`);
  if (response.status !== 200) throw new Error(`GET /metrics: ${response.status}`);
  const text = await response.text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return {
    text,
    value: (series) => samples.get(series),
    series: (name) => [...samples.keys()].filter((key) => key === name || key.startsWith(`${name}{`)),
  };
}

/** How much each series grew between two scrapes (0 for a series absent from both). */
export function growth(before: Scrape, after: Scrape, series: readonly string[]): Record<string, number> {
  return Object.fromEntries(
    series.map((name) => [name, (after.value(name) ?? 0) - (before.value(name) ?? 0)]),
  );
}
