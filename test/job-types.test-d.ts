import { describe, expectTypeOf, it } from "vitest";
import * as v from "valibot";
import { z } from "zod";
import {
  type EnqueuedJob,
  type EnqueueResult,
  FirmQueue,
  type Job,
  type JobArguments,
  type JobContext,
} from "../src/index.js";

// Type-only: checked by vitest's typecheck (see vitest.config.ts), never run.
const firm = new FirmQueue({ databaseUrl: "sqlite::memory:" });

describe("declared argument types", () => {
  it("a declaration's type parameter types enqueue and the handler", () => {
    const sendEmail = firm.declareJob<{ to: string }>("send-email", { queue: "mail" });
    expectTypeOf(sendEmail).toEqualTypeOf<Job<{ to: string }>>();
    expectTypeOf(sendEmail.enqueue).parameter(0).toEqualTypeOf<{ to: string }>();
    // @ts-expect-error a wrong argument type
    void sendEmail.enqueue({ to: 1 });
    // @ts-expect-error a missing field
    void sendEmail.enqueue({});
    firm.implement(sendEmail, async (args, context) => {
      expectTypeOf(args).toEqualTypeOf<{ to: string }>();
      expectTypeOf(context).toEqualTypeOf<JobContext>();
    });
    // @ts-expect-error a handler for other arguments
    firm.implement(sendEmail, async (_args: { id: number }) => {});
  });

  it("the concurrency key function gets the declared arguments", () => {
    firm.declareJob<{ account: number }>("sync", {
      concurrency: {
        key: (args) => {
          expectTypeOf(args).toEqualTypeOf<{ account: number }>();
          return args.account;
        },
      },
    });
  });

  it("a job declared without a type takes storable values only, never any", () => {
    const loose = firm.declareJob("loose");
    expectTypeOf(loose.enqueue).parameter(0).toEqualTypeOf<JobArguments>();
    void loose.enqueue({ a: [1, "two", null, new Date()] });
    // @ts-expect-error a Map cannot be stored
    void loose.enqueue(new Map());
    // @ts-expect-error nor can a function
    void loose.enqueue(() => 1);
    const defined = firm.defineJob("unannotated", async (args) => {
      expectTypeOf(args).toEqualTypeOf<JobArguments>();
      expectTypeOf(args).not.toBeAny();
    });
    // @ts-expect-error a Map cannot be stored
    void defined.enqueue(new Map());
  });

  it("an annotated handler types defineJob's enqueue", () => {
    const job = firm.defineJob("annotated", async (_args: { n: number }) => {});
    // @ts-expect-error a wrong argument type
    void job.enqueue({ n: "1" });
    void job.enqueue({ n: 1 });
  });

  it("a drop-on-conflict limit lets enqueue resolve to a dropped result (id null); any other, never", () => {
    const job = firm.declareJob<{ k: string }>("dropping", { concurrency: { key: "k", onConflict: "drop" } });
    expectTypeOf(job.enqueue).returns.resolves.toEqualTypeOf<EnqueueResult>();
    expectTypeOf<Awaited<ReturnType<typeof job.enqueue>>["id"]>().toEqualTypeOf<number | null>();
    const blocking = firm.declareJob<{ k: string }>("blocking", { concurrency: { key: "k" } });
    expectTypeOf(blocking.enqueue).returns.resolves.toEqualTypeOf<EnqueuedJob>();
    expectTypeOf<Awaited<ReturnType<typeof blocking.enqueue>>["id"]>().toEqualTypeOf<number>();
  });
});

describe("schemas", () => {
  it("zod: enqueue takes the schema's input, the handler gets its output", () => {
    const schema = z.object({ to: z.string(), retries: z.number().default(3), at: z.coerce.date() });
    const job = firm.declareJob("zod-mail", { schema });
    expectTypeOf(job.enqueue).parameter(0).toEqualTypeOf<z.input<typeof schema>>();
    void job.enqueue({ to: "a", at: "2026-01-01" });
    // @ts-expect-error to must be a string
    void job.enqueue({ to: 1, at: "2026-01-01" });
    // @ts-expect-error a Map is no object of the schema
    void job.enqueue(new Map());
    firm.implement(job, async (args) => {
      expectTypeOf(args).toEqualTypeOf<z.output<typeof schema>>();
      expectTypeOf(args.retries).toEqualTypeOf<number>();
    });
  });

  it("valibot with defineJob: the handler's arguments come from the schema", () => {
    const schema = v.object({ sku: v.string(), qty: v.number() });
    const job = firm.defineJob(
      "valibot-restock",
      async (args) => {
        expectTypeOf(args).toEqualTypeOf<{ sku: string; qty: number }>();
      },
      { schema, concurrency: { key: (args) => args.sku } },
    );
    // @ts-expect-error qty must be a number
    void job.enqueueAll([{ sku: "a", qty: "1" }]);
    void job.enqueueAll([{ sku: "a", qty: 1 }], { each: (args) => ({ priority: args.qty }) });
  });
});
