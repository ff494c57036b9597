import { expect, it } from "vitest";
import * as v from "valibot";
import { z } from "zod";
import { ConfigurationError, InvalidJobArgumentsError } from "../src/index.js";
import { countRows, describeEachDatabase } from "./support/harness.js";

describeEachDatabase("job argument schemas (Standard Schema)", (env) => {
  it("zod: valid arguments are stored as given; the handler gets the schema's output", async () => {
    const firm = env.firm();
    const schema = z.object({ to: z.string().email(), retries: z.number().int().default(3) });
    const seen: unknown[] = [];
    const mail = firm.defineJob("mail", async (args) => void seen.push(args), { schema });
    const id = (await mail.enqueue({ to: "ada@example.com" })).id;
    expect((await firm.getJob(id))?.arguments).toEqual({ to: "ada@example.com" });
    await firm.drain();
    expect(seen).toEqual([{ to: "ada@example.com", retries: 3 }]);
  });

  it("zod: invalid arguments throw InvalidJobArgumentsError listing every issue, and nothing is written", async () => {
    const firm = env.firm();
    const mail = firm.declareJob("mail", { schema: z.object({ to: z.string().email(), n: z.number() }) });
    const error = await mail.enqueue({ to: "nope", n: "1" as unknown as number }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidJobArgumentsError);
    const invalid = error as InvalidJobArgumentsError;
    expect(invalid.stage).toBe("enqueue");
    expect(invalid.issues.map((issue) => issue.path)).toEqual(["to", "n"]);
    expect(invalid.message).toMatch(
      /^Cannot enqueue job "mail": its arguments do not match the job's schema: to: .+; n: /,
    );
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(0);
  });

  it("valibot: bulk enqueue writes nothing when any item fails, and names the item", async () => {
    const firm = env.firm();
    const schema = v.object({ sku: v.pipe(v.string(), v.minLength(3)), qty: v.number() });
    const restock = firm.declareJob("restock", { schema });
    const error = await restock
      .enqueueAll([
        { sku: "abc", qty: 1 },
        { sku: "abd", qty: 2 },
        { sku: "x", qty: 3 },
      ])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidJobArgumentsError);
    expect((error as InvalidJobArgumentsError).at).toBe(2);
    expect((error as Error).message).toMatch(/item 2 of the list; nothing was written\).*sku: /);
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(0);
    const ids = await restock.enqueueAll([{ sku: "abc", qty: 1 }]);
    expect(ids).toHaveLength(1);
  });

  it("enqueue by name validates against the loaded declaration", async () => {
    const firm = env.firm();
    firm.declareJob("typed", { schema: z.object({ n: z.number() }) });
    await expect(firm.enqueue("typed", { n: "x" })).rejects.toThrow(InvalidJobArgumentsError);
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(0);
    expect(await firm.enqueue("typed", { n: 1 })).toEqual({ status: "created", id: expect.any(Number) });
  });

  it("a stored job that no longer matches the schema fails before its handler runs, without retries", async () => {
    // The old version of the app enqueued without a schema; the new one requires a field.
    const old = env.firm();
    const id = (await old.declareJob("invoice").enqueue({ customer: 5 })).id;
    const now = env.firm();
    let ran = false;
    now.defineJob("invoice", async () => void (ran = true), {
      schema: z.object({ customer: z.number(), currency: z.string() }),
      retry: { attempts: 5 },
    });
    expect(await now.drain()).toBe(1);
    expect(ran).toBe(false);
    const job = await now.getJob(id);
    expect(job?.state).toBe("failed");
    expect(job?.attempts).toBe(1);
    expect(job?.error?.name).toBe(InvalidJobArgumentsError.name);
    expect(job?.error?.message).toMatch(new RegExp(`^Job ${id} \\("invoice"\\) was not run: .*currency: `));
  });

  it("the concurrency key is computed from the schema's output", async () => {
    const firm = env.firm();
    const job = firm.declareJob("keyed", {
      schema: z.object({ account: z.coerce.number() }),
      concurrency: { key: (args) => args.account * 2, to: 1 },
    });
    const id = (await job.enqueue({ account: "21" })).id;
    const row = await (await env.db())
      .selectFrom("firm_queue_jobs")
      .select("concurrency_key")
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    expect(row.concurrency_key).toBe("keyed/42");
  });

  it("a schema that throws is reported as an issue; something that is not a schema is refused at declaration", async () => {
    const firm = env.firm();
    const broken = {
      "~standard": {
        version: 1 as const,
        vendor: "test",
        validate: () => {
          throw new Error("boom");
        },
      },
    };
    const job = firm.declareJob("broken", { schema: broken });
    await expect(job.enqueue(null)).rejects.toThrow(/the schema threw: boom/);
    expect(() => firm.declareJob("not-schema", { schema: { parse: () => 1 } as never })).toThrow(ConfigurationError);
    expect(() => firm.declareJob("not-schema", { schema: { parse: () => 1 } as never })).toThrow(
      /option schema must be a Standard Schema/,
    );
  });
});
