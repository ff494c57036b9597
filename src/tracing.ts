import type * as Otel from "@opentelemetry/api";

type Api = typeof Otel;

/** What tracing needs to know of a job being enqueued. */
export interface TracedEnqueue {
  readonly className: string;
  readonly queueName: string;
}

/** What tracing needs to know of a job whose attempt is about to run. */
export interface TracedAttempt {
  readonly jobId: number;
  readonly name: string;
  readonly queue: string;
  readonly attempt: number;
  /** `firm_queue_jobs.trace_context`: the context the producer stored, or null. */
  readonly traceContext: string | null;
}

/** An enqueue's producer span: its context to store with the jobs, and how to end it. */
export interface EnqueueSpan {
  /** JSON text for `firm_queue_jobs.trace_context`; null when nothing is traced. */
  readonly traceContext: string | null;
  /** End the span once the jobs are written (`ids`), or failed to be (`error`). */
  end(ids: readonly (number | null)[] | null, error?: unknown): void;
}

const SYSTEM = "firm-queue";

/**
 * OpenTelemetry for jobs, through `@opentelemetry/api` (an optional peer dependency): a PRODUCER
 * span per enqueue call, whose context is stored with each job, and a CONSUMER span per attempt,
 * child of that context and linked to it, active while the handler runs. Attributes follow the
 * messaging semantic conventions (`messaging.system` "firm-queue", `messaging.destination.name`
 * the queue, `messaging.operation.type` "send" / "process"). Without an SDK registered the API's
 * no-op tracer makes this nearly free, and nothing is stored.
 */
export class JobTracing {
  constructor(private readonly api: Api) {}

  /** Asked for on each use, not kept: the application may register, replace or disable its provider at any time. */
  private get tracer(): Otel.Tracer {
    return this.api.trace.getTracer(SYSTEM);
  }

  /**
   * Whether spans can record: false while no SDK is registered behind the API's global proxy
   * provider. Asked on each use, like {@link tracer}. A provider of another copy of the API is
   * taken as recording (the full path then decides, as before).
   */
  private get recording(): boolean {
    const provider = this.api.trace.getTracerProvider();
    return !(provider instanceof this.api.ProxyTracerProvider) || provider.getDelegateTracer(SYSTEM) !== undefined;
  }

  /**
   * Start the producer span of one enqueue call (one span for an `enqueueAll` batch). Null when
   * nothing would record it and no span is active to pass on: then nothing is started or stored.
   */
  startEnqueue(jobs: readonly TracedEnqueue[]): EnqueueSpan | null {
    const { api } = this;
    if (!this.recording && api.trace.getSpan(api.context.active()) === undefined) return null;
    const queues = new Set(jobs.map((job) => job.queueName));
    const names = new Set(jobs.map((job) => job.className));
    const queue = queues.size === 1 ? jobs[0]!.queueName : undefined;
    const attributes: Otel.Attributes = {
      "messaging.system": SYSTEM,
      "messaging.operation.type": "send",
      "messaging.operation.name": "enqueue",
      ...(queue === undefined ? {} : { "messaging.destination.name": queue }),
      ...(jobs.length > 1 ? { "messaging.batch.message_count": jobs.length } : {}),
      ...(names.size === 1 ? { "firm_queue.job.name": jobs[0]!.className } : {}),
    };
    const parent = api.context.active();
    const span = this.tracer.startSpan(
      queue === undefined ? "send" : `send ${queue}`,
      { kind: api.SpanKind.PRODUCER, attributes },
      parent,
    );
    const traceContext = this.serialize(api.trace.setSpan(parent, span));
    return {
      traceContext,
      end: (ids, error) => {
        if (ids?.length === 1 && ids[0] !== null) span.setAttribute("messaging.message.id", String(ids[0]));
        if (error !== undefined) this.fail(span, error);
        span.end();
      },
    };
  }

  /** Run `work` (the attempt) inside its consumer span, ended when the attempt ends. */
  async runAttempt<T>(attempt: TracedAttempt, work: () => Promise<T>): Promise<T> {
    // Nothing to record and no producer to join: the attempt runs as it would without the API.
    if (attempt.traceContext === null && !this.recording) return work();
    const { api } = this;
    const producer = this.deserialize(attempt.traceContext);
    const producerSpan = api.trace.getSpanContext(producer);
    const span = this.tracer.startSpan(
      `process ${attempt.queue}`,
      {
        kind: api.SpanKind.CONSUMER,
        attributes: {
          "messaging.system": SYSTEM,
          "messaging.operation.type": "process",
          "messaging.operation.name": "process",
          "messaging.destination.name": attempt.queue,
          "messaging.message.id": String(attempt.jobId),
          "firm_queue.job.name": attempt.name,
          "firm_queue.job.attempt": attempt.attempt,
        },
        links: producerSpan === undefined ? [] : [{ context: producerSpan }],
      },
      producer,
    );
    try {
      return await api.context.with(api.trace.setSpan(producer, span), work);
    } catch (error) {
      this.fail(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  /** The context as JSON text: W3C `traceparent` always, plus what the global propagator writes. */
  private serialize(context: Otel.Context): string | null {
    const spanContext = this.api.trace.getSpanContext(context);
    if (spanContext === undefined || !this.api.isSpanContextValid(spanContext)) return null;
    const carrier: Record<string, string> = {};
    this.api.propagation.inject(context, carrier);
    carrier.traceparent ??= `00-${spanContext.traceId}-${spanContext.spanId}-0${spanContext.traceFlags & 1}`;
    if (spanContext.traceState !== undefined) carrier.tracestate ??= spanContext.traceState.serialize();
    return JSON.stringify(carrier);
  }

  /** The producer's context from its stored text; the root context when there is none. */
  private deserialize(text: string | null): Otel.Context {
    const { api } = this;
    const root = api.ROOT_CONTEXT;
    if (text === null) return root;
    let carrier: Record<string, string>;
    try {
      carrier = JSON.parse(text) as Record<string, string>;
    } catch {
      return root;
    }
    const extracted = api.propagation.extract(root, carrier);
    if (api.trace.getSpanContext(extracted) !== undefined) return extracted;
    // No global propagator (or one that ignores W3C): read the traceparent ourselves.
    const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(carrier.traceparent ?? "");
    if (match === null) return extracted;
    return api.trace.setSpanContext(extracted, {
      traceId: match[1]!,
      spanId: match[2]!,
      traceFlags: Number.parseInt(match[3]!, 16),
      isRemote: true,
    });
  }

  private fail(span: Otel.Span, error: unknown): void {
    if (error instanceof Error) span.recordException(error);
    span.setStatus({
      code: this.api.SpanStatusCode.ERROR,
      message: error instanceof Error ? error.message : String(error),
    });
  }
}

let loaded: Promise<JobTracing | null> | undefined;
/** What `loaded` settled to, once it has: read without awaiting on every job. */
let settled: JobTracing | null | undefined;

/**
 * This process's job tracing, loaded on first use: null when `@opentelemetry/api` is not
 * installed (or cannot load), so tracing is off and costs nothing.
 */
export function jobTracing(): Promise<JobTracing | null> {
  loaded ??= loadJobTracing(() => import("@opentelemetry/api")).then((tracing) => (settled = tracing));
  return loaded;
}

/**
 * This process's job tracing if it has been loaded already (undefined if not yet): the worker
 * asks for every job it runs, and an `await` on a settled promise would still cost a turn of the
 * microtask queue and a promise each time.
 */
export function loadedJobTracing(): JobTracing | null | undefined {
  return settled;
}

/** Build job tracing from `load` (the API's import); null when it fails. */
export async function loadJobTracing(load: () => Promise<Api>): Promise<JobTracing | null> {
  try {
    return new JobTracing(await load());
  } catch {
    return null;
  }
}
