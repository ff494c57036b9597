import { importDriver } from "../database/driver-import.js";
import type { MetricFamily } from "../metrics-exposition.js";

/**
 * A prom-client `Registry`, typed by the few members firm-queue relies on: prom-client is an
 * optional peer dependency, so firm-queue's types must not name it. Cast it to prom-client's
 * `Registry` to pass it to `Registry.merge`.
 */
export interface PromRegistry {
  metrics(): Promise<string>;
  readonly contentType: string;
  registerMetric(metric: never): void;
  getMetricsAsArray(): object[];
}

/** Anything metrics can be registered into: a prom-client `Registry` (yours, or prom-client's default `register`). */
export interface MetricRegistrar {
  registerMetric(metric: never): void;
}

/** A family's name, help and type: what prom-client needs to know before it reads the values. */
export interface FamilyHeader {
  readonly name: string;
  readonly help: string;
  readonly type: MetricFamily["type"];
}

/** Load prom-client and make a Registry holding firm-queue's metrics (see {@link registerFamilies}). */
export async function promRegistry(
  families: () => Promise<MetricFamily[]>,
  headers: readonly FamilyHeader[],
): Promise<PromRegistry> {
  const prom = await importDriver("prom-client", "firm.metrics.registry()", () => import("prom-client"));
  const registry = new prom.Registry();
  registerFamilies(registry as unknown as MetricRegistrar, families, headers);
  return registry as unknown as PromRegistry;
}

/**
 * Register firm-queue's metrics in a prom-client registry as objects of prom-client's metric
 * shape (`name`, `help`, `type`, `get()`): they read the current values at scrape time, so the
 * registry shows what the text endpoint shows, with nothing copied into prom-client counters.
 * `families` is called once per scrape and shared by every metric of that scrape.
 */
export function registerFamilies(
  registry: MetricRegistrar,
  families: () => Promise<MetricFamily[]>,
  headers: readonly FamilyHeader[],
): void {
  let scrape: Promise<Map<string, MetricFamily>> | undefined;
  const current = () => {
    // The first metric asked starts the read; the others of the same scrape (same turn of the
    // event loop and the microtasks after it) reuse it.
    if (!scrape) {
      scrape = families().then((list) => new Map(list.map((family) => [family.name, family])));
      const mine = scrape;
      setTimeout(() => {
        if (scrape === mine) scrape = undefined;
      }, 0);
    }
    return scrape;
  };
  for (const { name, help, type } of headers) {
    const metric = {
      name,
      help,
      type,
      aggregator: "sum",
      async get() {
        const family = (await current()).get(name);
        return {
          name,
          help,
          type,
          aggregator: "sum",
          values: (family?.samples ?? []).map((sample) => ({
            value: sample.value,
            labels: sample.labels,
            ...(sample.name === name ? {} : { metricName: sample.name }),
          })),
        };
      },
      reset() {},
    };
    registry.registerMetric(metric as never);
  }
}
