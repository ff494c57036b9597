import { context, propagation, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { loadJobTracing } from "../src/tracing.js";
import { describeEachDatabase, type TestEnv } from "./support/harness.js";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(contextManager.enable());
});
afterEach(() => {
  exporter.reset();
  propagation.disable();
});
afterAll(async () => {
  trace.disable();
  context.disable();
  await provider.shutdown();
});

function spanNamed(name: string): ReadableSpan {
  const found = exporter.getFinishedSpans().filter((span) => span.name === name);
  expect(found, `spans named "${name}"`).toHaveLength(1);
  return found[0]!;
}

async function storedTraceContext(env: TestEnv, id: number): Promise<string | null> {
  const row = await (await env.db())
    .selectFrom("firm_queue_jobs")
    .select("trace_context")
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
  return row.trace_context;
}

describeEachDatabase("OpenTelemetry traces", (env) => {
  for (const setup of ["with the W3C propagator registered", "with no propagator registered"] as const) {
    it(`the attempt's consumer span is a child of, and links to, the enqueue's producer span (${setup})`, async () => {
      if (setup === "with the W3C propagator registered")
        propagation.setGlobalPropagator(new W3CTraceContextPropagator());
      const producer = env.firm();
      const job = producer.defineJob("traced", async () => undefined, { queue: "mail" });
      const tracer = trace.getTracer("test");
      // The enqueue happens inside an application's request span.
      const id = await tracer.startActiveSpan("POST /signup", async (request) => {
        try {
          return (await job.enqueue(null)).id;
        } finally {
          request.end();
        }
      });
      const stored = await storedTraceContext(env, id);
      expect(JSON.parse(stored!)).toMatchObject({
        traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/),
      });

      // Another instance (as another process would) runs it; the handler's own spans nest under the attempt.
      const consumer = env.firm();
      consumer.defineJob(
        "traced",
        async () => {
          tracer.startSpan("send email").end();
        },
        { queue: "mail" },
      );
      expect(await consumer.drain()).toBe(1);

      const request = spanNamed("POST /signup");
      const send = spanNamed("send mail");
      const processSpan = spanNamed("process mail");
      const inner = spanNamed("send email");
      expect(send.kind).toBe(SpanKind.PRODUCER);
      expect(send.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
      expect(send.attributes).toMatchObject({
        "messaging.system": "firm-queue",
        "messaging.destination.name": "mail",
        "messaging.operation.type": "send",
        "messaging.message.id": String(id),
        "firm_queue.job.name": "traced",
      });
      expect(processSpan.kind).toBe(SpanKind.CONSUMER);
      expect(processSpan.spanContext().traceId).toBe(request.spanContext().traceId);
      expect(processSpan.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
      expect(processSpan.links.map((link) => link.context.spanId)).toEqual([send.spanContext().spanId]);
      expect(processSpan.attributes).toMatchObject({
        "messaging.system": "firm-queue",
        "messaging.destination.name": "mail",
        "messaging.operation.type": "process",
        "messaging.message.id": String(id),
        "firm_queue.job.name": "traced",
        "firm_queue.job.attempt": 1,
      });
      expect(processSpan.status.code).not.toBe(SpanStatusCode.ERROR);
      expect(inner.parentSpanContext?.spanId).toBe(processSpan.spanContext().spanId);
    });
  }

  it("a failed attempt's span records the error; the retry is a second span under the same producer", async () => {
    const firm = env.firm();
    const job = firm.defineJob(
      "flaky",
      async (_args: null, ctx) => {
        if (ctx.attempt === 1) throw new Error("first attempt fails");
      },
      { retry: { attempts: 2, backoff: 0 } },
    );
    await job.enqueue(null);
    await firm.drain();
    const send = spanNamed("send default");
    const attempts = exporter.getFinishedSpans().filter((span) => span.name === "process default");
    expect(attempts.map((span) => span.attributes["firm_queue.job.attempt"])).toEqual([1, 2]);
    for (const span of attempts) expect(span.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
    expect(attempts[0]!.status).toEqual({ code: SpanStatusCode.ERROR, message: "first attempt fails" });
    expect(attempts[0]!.events.map((event) => event.name)).toEqual(["exception"]);
    expect(attempts[1]!.status.code).not.toBe(SpanStatusCode.ERROR);
  });

  it("enqueueAll is one producer span for the batch, its context stored with every job", async () => {
    const firm = env.firm();
    const job = firm.defineJob("bulk", async () => undefined);
    const ids = (await job.enqueueAll([1, 2, 3])).map((result) => result.id);
    const send = spanNamed("send default");
    expect(send.attributes["messaging.batch.message_count"]).toBe(3);
    const stored = await Promise.all(ids.map((id) => storedTraceContext(env, id)));
    expect(new Set(stored).size).toBe(1);
    expect(stored[0]).toContain(send.spanContext().spanId);
  });

  it("stores no trace context when no tracer provider is registered", async () => {
    trace.disable();
    try {
      const firm = env.firm();
      const job = firm.defineJob("untraced", async () => undefined);
      const id = (await job.enqueue(null)).id;
      expect(await storedTraceContext(env, id)).toBeNull();
      expect(await firm.drain()).toBe(1);
      expect(exporter.getFinishedSpans()).toEqual([]);
    } finally {
      trace.setGlobalTracerProvider(provider);
    }
  });
});

describe("with no tracer provider registered", () => {
  it("starts no span at enqueue or per attempt, so tracing costs nothing per job", async () => {
    trace.disable();
    const getTracer = vi.spyOn(trace, "getTracer");
    try {
      const tracing = await loadJobTracing(() => import("@opentelemetry/api"));
      expect(tracing!.startEnqueue([{ className: "untraced", queueName: "default" }])).toBeNull();
      const attempt = { jobId: 1, name: "untraced", queue: "default", attempt: 1, traceContext: null };
      expect(await tracing!.runAttempt(attempt, async () => "ran")).toBe("ran");
      expect(getTracer).not.toHaveBeenCalled();
      // A provider registered later is used from then on.
      trace.setGlobalTracerProvider(provider);
      const span = tracing!.startEnqueue([{ className: "traced", queueName: "default" }]);
      expect(span?.traceContext).toMatch(/traceparent/);
      span!.end([1]);
      expect(exporter.getFinishedSpans().map((finished) => finished.name)).toEqual(["send default"]);
    } finally {
      getTracer.mockRestore();
      trace.setGlobalTracerProvider(provider);
    }
  });
});

describe("without @opentelemetry/api", () => {
  it("tracing is off (null) when the package cannot be imported", async () => {
    const missing = Object.assign(new Error("Cannot find package '@opentelemetry/api'"), {
      code: "ERR_MODULE_NOT_FOUND",
    });
    expect(await loadJobTracing(() => Promise.reject(missing))).toBeNull();
  });
});
