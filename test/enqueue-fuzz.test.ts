import fc from "fast-check";
import { expect, test } from "vitest";
import type { EnqueueResult, EnqueueTransaction, FirmQueue, Job, JobArguments } from "../src/index.js";
import { appClients } from "./support/app-clients.js";
import {
  anyValue,
  FUZZ_CASE_TIMEOUT_MS,
  hostile,
  hostileNumber,
  hostileOptions,
  hostileText,
  materialize,
  optionValue,
  outcome,
  show,
  tableCounts,
  trapObject,
} from "./support/fuzz-inputs.js";
import { describeEachDatabase } from "./support/harness.js";
import { fuzzParameters } from "./support/hostile-requests.js";

/** Options of one job: every key enqueue knows, with plausible or hostile values. */
const jobOptions = hostileOptions({
  queue: optionValue(fc.constantFrom("default", "mail", "a-b_c.d")),
  priority: optionValue(fc.integer({ min: -10, max: 10 })),
  wait: optionValue(fc.oneof(fc.nat({ max: 60_000 }), fc.constantFrom("5s", "1m", "0ms"))),
  at: optionValue(fc.date({ min: new Date("2000-01-01"), max: new Date("2100-01-01") })),
  key: optionValue(fc.constantFrom("k1", "k2")),
});

/** Text and numbers as well as any value, for where the valid values are text or numbers. */
const anyArgument = fc.oneof(
  anyValue,
  hostileText,
  hostileNumber,
  trapObject,
  fc.record({ n: fc.oneof(anyValue, trapObject), k: hostileText }),
);

/** `each` of enqueueAll: a list (of the right length or not) or a function, of hostile options. */
const each = fc.oneof(
  fc.array(jobOptions, { maxLength: 4 }),
  fc
    .array(jobOptions, { minLength: 1, maxLength: 4 })
    .map((list) => (_args: unknown, index: number) => materialize(list[index])),
  anyValue,
);

/** The ways to enqueue: a job's handle, by name, in bulk, each with the definition it targets. */
const call = fc.oneof(
  fc.record({ form: fc.constant("handle" as const), job: fc.nat(), args: anyArgument, options: jobOptions }),
  fc.record({
    form: fc.constant("by name" as const),
    name: fc.oneof(fc.constantFrom("plain", "keyed", "unique", "undeclared"), hostileText),
    args: anyArgument,
    options: fc.oneof(
      jobOptions,
      hostileOptions({ undeclared: optionValue(fc.boolean()), queue: optionValue(fc.constant("mail")) }),
    ),
  }),
  fc.record({
    form: fc.constant("enqueueAll" as const),
    job: fc.nat(),
    argsList: fc.oneof(fc.array(anyArgument, { maxLength: 4 }), anyValue),
    options: fc.oneof(
      jobOptions,
      fc.record({ each, queue: optionValue(fc.constant("mail")) }, { requiredKeys: ["each"] }),
    ),
  }),
);

/** The definitions under fuzz: plain, limited by a key computed from the arguments, and unique by one. */
function definitions(firm: FirmQueue): Job<unknown, never>[] {
  return [
    firm.defineJob("plain", async () => {}),
    firm.defineJob("keyed", async () => {}, {
      concurrency: { key: (args: unknown) => (args as { k?: string } | null)?.k as string, to: 2 },
    }),
    firm.defineJob("unique", async () => {}, {
      unique: { key: (args: unknown) => (args as { k?: string } | null)?.k as string },
    }),
  ] as unknown as Job<unknown, never>[];
}

type Call = typeof call extends fc.Arbitrary<infer T> ? T : never;

/**
 * Cases earlier runs found, run first every time: each failed before its fix (a TypeError from
 * a message that could not show a bigint; a RangeError from arguments nested too deep; a getter
 * that threw through; a NUL in a concurrency or unique key, a database error on PostgreSQL; a
 * lone surrogate in a job or queue name, stored as U+FFFD).
 */
const FOUND: Call[] = [
  { form: "by name", name: "plain", args: "", options: { queue: 0n } },
  { form: "handle", job: 0, args: hostile("3000 levels deep"), options: undefined },
  { form: "handle", job: 0, args: { n: hostile("throwing getter"), k: "" }, options: undefined },
  { form: "handle", job: 1, args: { n: 0, k: "\0" }, options: undefined },
  { form: "handle", job: 2, args: { n: 0, k: "a\0" }, options: undefined },
  { form: "handle", job: 0, args: null, options: { key: "\0" } },
  { form: "by name", name: "\uD800x", args: null, options: { undeclared: true } },
  { form: "handle", job: 0, args: null, options: { queue: "a\uDC00" } },
  { form: "enqueueAll", job: 0, argsList: [null], options: { each: [{ queue: "\uDFFF" }] } },
];

/** The fuzz parameters with {@link FOUND} as fixed examples. */
const withFound = () => ({ ...fuzzParameters(), examples: FOUND.map((c) => [c] as [Call]) });

/** Run one fuzzed call, with `transaction` (the app's) added to its options when given. */
function run(
  firm: FirmQueue,
  jobs: Job<unknown, never>[],
  c: Call,
  transaction?: EnqueueTransaction,
): Promise<unknown> {
  const withTransaction = (options: unknown) =>
    transaction === undefined
      ? options
      : typeof options === "object" && options !== null
        ? { ...options, transaction }
        : options;
  switch (c.form) {
    case "handle":
      return jobs[c.job % jobs.length]!.enqueue(c.args as never, withTransaction(c.options) as never);
    case "by name":
      return firm.enqueue(c.name, c.args as JobArguments, withTransaction(c.options) as never);
    case "enqueueAll":
      return jobs[c.job % jobs.length]!.enqueueAll(c.argsList as never, withTransaction(c.options) as never);
  }
}

describeEachDatabase("enqueue under fuzzed arguments and options", (env) => {
  test(
    "every refusal is a named error and writes nothing; every accepted job reads back as it was given",
    async () => {
      const firm = env.firm();
      const jobs = definitions(firm);
      const db = await env.db();
      await fc.assert(
        fc.asyncProperty(call, async (c) => {
          const before = await tableCounts(db);
          const result = await outcome(
            () => run(firm, jobs, materialize(c)),
            () => `${c.form} ${show(c)}`,
          );
          if (!result.accepted) {
            expect(await tableCounts(db), `${c.form} ${show(c)} was refused but wrote`).toEqual(before);
            return;
          }
          // What was written is what was asked for: no name or queue mangled on its way in.
          const results = (Array.isArray(result.value) ? result.value : [result.value]) as EnqueueResult[];
          for (const [index, enqueued] of results.entries()) {
            if (enqueued.status !== "created") continue;
            const job = await firm.getJob(enqueued.id);
            const given = c.form === "enqueueAll" ? undefined : (c.options as { queue?: unknown } | undefined);
            expect(job, show(c)).not.toBeNull();
            if (c.form === "by name") expect(job!.name).toBe(c.name);
            if (typeof given?.queue === "string") expect(job!.queue, `${show(c)} [${index}]`).toBe(given.queue);
          }
        }),
        withFound(),
      );
    },
    FUZZ_CASE_TIMEOUT_MS,
  );

  test(
    "inside the application's transaction, a refused enqueue leaves nothing behind even when the app commits",
    async () => {
      const firm = env.firm();
      const jobs = definitions(firm);
      const db = await env.db();
      const { open } = appClients(env.dialect, () => env.url)[0]!;
      const app = open();
      try {
        await fc.assert(
          fc.asyncProperty(call, async (c) => {
            const before = await tableCounts(db);
            let refused = false;
            await app.transaction(
              async (transaction) => {
                const result = await outcome(
                  () => run(firm, jobs, materialize(c), transaction),
                  () => `${c.form} in a transaction ${show(c)}`,
                );
                refused = !result.accepted;
              },
              // The app catches the error and commits its transaction anyway.
              { rollback: false },
            );
            if (refused) expect(await tableCounts(db), `${show(c)} was refused but wrote`).toEqual(before);
          }),
          withFound(),
        );
      } finally {
        await app.close();
      }
    },
    FUZZ_CASE_TIMEOUT_MS,
  );

  test("enqueueAll of no jobs still refuses bad options, as it would with jobs", async () => {
    const firm = env.firm();
    const job = firm.defineJob("plain", async () => {});
    for (const options of [{ queue: 5 }, { bogus: 1 }, { priority: 0.5 }, { wait: "soon" }, { key: "" }, { each: 3 }]) {
      const result = await outcome(
        () => job.enqueueAll([], options as never),
        () => `enqueueAll([], ${show(options)})`,
      );
      expect(result.accepted, show(options)).toBe(false);
    }
    expect(await job.enqueueAll([], { queue: "mail", priority: 1, wait: "1m" })).toEqual([]);
  });
});
