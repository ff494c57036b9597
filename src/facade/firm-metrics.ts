import { toMilliseconds, type Duration } from "../duration.js";
import { FirmQueueError } from "../errors.js";
import type { Logger } from "../logger.js";
import { ChildSamples, MetricSamples, sumSnapshots, type SampleSnapshot } from "../metric-samples.js";
import { EXPOSITION_CONTENT_TYPE, formatExposition, type MetricFamily } from "../metrics-exposition.js";
import { rejectUnknownKeys } from "../option-checks.js";
import type { JobInspection } from "./job-inspection.js";
import {
  BATCH_METRIC,
  COUNTER_METRICS,
  GAUGE_METRICS,
  gaugeFamilies,
  HISTOGRAM_METRICS,
  sampleFamilies,
  type GaugeReading,
} from "./metric-families.js";
import { promRegistry, registerFamilies, type MetricRegistrar, type PromRegistry } from "./prom-registry.js";

/** Options of `firm.metrics.configure()`. */
export interface MetricsOptions {
  /** Read the database gauges at most this often, however often scraped. Default 15s. */
  readonly gaugeInterval?: Duration | undefined;
  /** A process whose heartbeat is older counts as stale. Default 5 min (the supervisors' default). */
  readonly aliveThreshold?: Duration | undefined;
  /** A scrape waits this long for the database before it answers without gauges (`database_up` 0). Default 5s. */
  readonly gaugeTimeout?: Duration | undefined;
}

const OPTION_KEYS = new Set(["gaugeInterval", "aliveThreshold", "gaugeTimeout"]);

/**
 * `firm.metrics`: Prometheus metrics of this FirmQueue. Counters and histograms of the jobs this
 * process (and, in fork mode, its children) enqueued and ran, and gauges read from the database
 * through `firm.inspect` (cached for `gaugeInterval`). Counting starts with the first call to
 * `enable()`, `text()`, `registry()` or `registerInto()`, or when a supervisor serves metrics.
 */
export class FirmMetrics {
  /** What this process recorded itself. */
  readonly samples = new MetricSamples();
  /** What fork-mode children sent. */
  readonly children = new ChildSamples();
  /** The content type of {@link text}: the Prometheus text format. */
  readonly contentType = EXPOSITION_CONTENT_TYPE;
  private gaugeIntervalMs = 15_000;
  private aliveThresholdMs = 300_000;
  private gaugeTimeoutMs = 5000;
  private enabled = false;
  private reading: { at: number; value: Promise<GaugeReading | null> } | undefined;

  constructor(
    private readonly inspect: JobInspection,
    private readonly logger: Logger,
    /** Called once, when counting starts (subscribes to the job events). */
    private readonly onEnable: (samples: MetricSamples) => void,
  ) {}

  /** Change how often gauges are read and when a process counts as stale. */
  configure(options: MetricsOptions): this {
    rejectUnknownKeys(options, OPTION_KEYS, "metrics option");
    if (options.gaugeInterval !== undefined)
      this.gaugeIntervalMs = toMilliseconds(options.gaugeInterval, "metrics option gaugeInterval");
    if (options.aliveThreshold !== undefined)
      this.aliveThresholdMs = toMilliseconds(options.aliveThreshold, "metrics option aliveThreshold");
    if (options.gaugeTimeout !== undefined)
      this.gaugeTimeoutMs = toMilliseconds(options.gaugeTimeout, "metrics option gaugeTimeout");
    this.reading = undefined;
    return this;
  }

  /** Start counting jobs in this process (idempotent). */
  enable(): this {
    if (!this.enabled) {
      this.enabled = true;
      this.onEnable(this.samples);
    }
    return this;
  }

  /** Whether counting has started. */
  get isEnabled(): boolean {
    return this.enabled;
  }

  /** The counters and histograms: this process's own plus its children's. */
  snapshot(): SampleSnapshot {
    return sumSnapshots([this.samples.snapshot(), this.children.total()]);
  }

  /** Every metric family, gauges read from the database when the cached reading is older than `gaugeInterval`. */
  async families(): Promise<MetricFamily[]> {
    this.enable();
    const reading = await this.gauges();
    return [...sampleFamilies(this.snapshot()), ...gaugeFamilies(reading)];
  }

  /** Every metric in the Prometheus text format (serve it with {@link contentType}). */
  async text(): Promise<string> {
    return formatExposition(await this.families());
  }

  /** A new prom-client Registry holding these metrics (needs the `prom-client` package). */
  async registry(): Promise<PromRegistry> {
    this.enable();
    return promRegistry(() => this.families(), METRIC_HEADERS);
  }

  /** Register these metrics in your own prom-client registry, e.g. prom-client's default `register`. */
  registerInto(registry: MetricRegistrar): void {
    this.enable();
    registerFamilies(registry, () => this.families(), METRIC_HEADERS);
  }

  /**
   * The database reading, shared by every scrape within `gaugeInterval` (concurrent scrapes share
   * one read in flight). A failed read is logged and shows as `firm_queue_database_up 0`; the
   * next scrape tries again.
   */
  private gauges(): Promise<GaugeReading | null> {
    const now = performance.now();
    if (this.reading && now - this.reading.at < this.gaugeIntervalMs) return this.reading.value;
    let timer: NodeJS.Timeout | undefined;
    const read = Promise.all([
      this.inspect.queues(),
      this.inspect.heartbeats({ aliveThreshold: this.aliveThresholdMs }),
    ]);
    // A database that does not answer must not hold the scrape: Prometheus would time out and
    // lose the counters as well.
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new GaugeTimeoutError(this.gaugeTimeoutMs)), this.gaugeTimeoutMs);
    });
    read.catch(() => undefined);
    const value = Promise.race([read, deadline])
      .finally(() => clearTimeout(timer))
      .then(
        ([queues, processes]) => ({ queues, processes }),
        (error: unknown) => {
          this.logger.warn("metrics: could not read the gauges from the database", {
            error: error instanceof Error ? error.message : String(error),
          });
          if (this.reading?.value === value) this.reading = undefined;
          return null;
        },
      );
    this.reading = { at: now, value };
    return value;
  }
}

/** The database did not answer the gauges' read in time. */
export class GaugeTimeoutError extends FirmQueueError {
  constructor(readonly timeoutMs: number) {
    super(`The database did not answer the metrics gauges' read within ${timeoutMs} ms`);
  }
}

/** Every metric firm-queue exposes, for registries that list metrics before reading them. */
export const METRIC_HEADERS = [
  ...Object.values(COUNTER_METRICS).map((meta) => ({ ...meta, type: "counter" as const })),
  { ...BATCH_METRIC, type: "counter" as const },
  ...Object.values(HISTOGRAM_METRICS).map((meta) => ({ ...meta, type: "histogram" as const })),
  ...Object.values(GAUGE_METRICS).map((meta) => ({ ...meta, type: "gauge" as const })),
];
