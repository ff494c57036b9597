import fc from "fast-check";
import { expect, test } from "vitest";
import { createDashboard, type FirmQueue, type JobState } from "../src/index.js";
import type { Db } from "../src/database/dialect.js";
import { registerProcess } from "../src/models/process.js";
import { runCliInProcess } from "./support/cli-in-process.js";
import { expectNamedError, FUZZ_CASE_TIMEOUT_MS, hostileText, show } from "./support/fuzz-inputs.js";
import { describeEachDatabase, enqueued } from "./support/harness.js";
import { fuzzParameters } from "./support/hostile-requests.js";
import { leaksInternals } from "./support/raw-http.js";
import { capturingLogger } from "./support/recurring.js";

/*
 * Rows altered behind the library's back: stored text that is not JSON or not the serializer's
 * format, a job in no state or in two, a claim row deleted or pointing at no process, NULL where
 * a value is expected. Every reader (getJob, firm.inspect, the dashboard, the CLI) then shows the
 * row or refuses it with a named error, and a worker fails the damaged job with a named error and
 * runs the others.
 */

/** Text stored where JSON of the serializer's format belongs: broken JSON, JSON of the wrong shape, a tag with nonsense in it. */
const storedText = fc.oneof(
  fc.constantFrom(
    "{",
    "",
    "not json",
    "null",
    "5",
    '"text"',
    "[]",
    "[1,2]",
    "true",
    '{"name":5,"message":{"a":1}}',
    '{"message":null}',
    '{"stack":7}',
    '{"$firm":"date","v":"yesterday"}',
    '{"$firm":"date","v":5}',
    '{"$firm":"bigint","v":"1.5"}',
    '{"$firm":"bigint","v":null}',
    '{"$firm":"object","v":5}',
    '{"$firm":"unheard-of","v":1}',
    '{"$firm":"date"}',
    '{"$firm":"date","v":"2026-13-45"}',
    '{"$firm":"bigint","v":""}',
    '{"__proto__":{"polluted":true}}',
    `${"[".repeat(20_000)}${"]".repeat(20_000)}`,
    "\uFFFD\u202E",
  ),
  fc.json({ maxDepth: 2 }),
  hostileText.map((text) => text.replaceAll("\0", "").replace(/[\uD800-\uDFFF]/g, "?")),
);

/** The text columns of a job that hold JSON, and the executions' and processes' ones. */
const JOB_TEXT_COLUMNS = ["arguments", "last_error", "result", "progress", "trace_context"] as const;

/** One damage to the job under test (or to a process / recurring task beside it). */
type Damage =
  | { kind: "job text"; column: (typeof JOB_TEXT_COLUMNS)[number]; value: string | null }
  | { kind: "failure text"; value: string | null }
  | { kind: "no execution row" }
  | { kind: "two execution rows" }
  | { kind: "claim row deleted" }
  | { kind: "claim of no process" }
  | { kind: "claim with process NULL" }
  | { kind: "unknown job name"; value: string }
  | { kind: "process metadata"; value: string | null }
  | { kind: "recurring arguments"; value: string | null };

const damage: fc.Arbitrary<Damage> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("job text" as const),
      column: fc.constantFrom(...JOB_TEXT_COLUMNS),
      value: fc.option(storedText, { nil: null, freq: 6 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("failure text" as const),
      value: fc.option(storedText, { nil: null, freq: 6 }),
    }),
  },
  fc.constantFrom(
    { kind: "no execution row" as const },
    { kind: "two execution rows" as const },
    { kind: "claim row deleted" as const },
    { kind: "claim of no process" as const },
    { kind: "claim with process NULL" as const },
  ),
  fc.record({
    kind: fc.constant("unknown job name" as const),
    value: fc.constantFrom("no-such-job", "failing ", "PLAIN"),
  }),
  fc.record({ kind: fc.constant("process metadata" as const), value: fc.option(storedText, { nil: null }) }),
  fc.record({ kind: fc.constant("recurring arguments" as const), value: fc.option(storedText, { nil: null }) }),
);

/** The state the damaged job is in before the damage. */
type State = "ready" | "scheduled" | "failed" | "finished" | "claimed";
const startState = fc.constantFrom<State>("ready", "scheduled", "failed", "finished", "claimed");

const STATES: JobState[] = [
  "pending",
  "ready",
  "scheduled",
  "blocked",
  "throttled",
  "claimed",
  "failed",
  "finished",
  "cancelled",
];

interface Jobs {
  readonly plain: ReturnType<FirmQueue["defineJob"]>;
  readonly failing: ReturnType<FirmQueue["defineJob"]>;
}

function define(firm: FirmQueue): Jobs {
  return {
    plain: firm.defineJob("plain", async (args: unknown) => ({ echoed: args })),
    failing: firm.defineJob(
      "failing",
      async () => {
        // Its stack replaced, so that a stack in a page can only be a leak (the dashboard shows a job's own).
        const error = new Error("expected failure");
        error.stack = "Error: expected failure";
        throw error;
      },
      { retry: { attempts: 1 } },
    ),
  };
}

/** A job of `state`, made through the library (claimed: moved to a claim of a registered worker by hand). */
async function jobIn(
  firm: FirmQueue,
  jobs: Jobs,
  db: Db,
  state: "ready" | "scheduled" | "failed" | "finished" | "claimed",
): Promise<number> {
  switch (state) {
    case "ready":
      return enqueued(jobs.plain.enqueue({ n: 1 }, { queue: "damaged" }));
    case "scheduled":
      return enqueued(jobs.plain.enqueue({ n: 1 }, { queue: "damaged", wait: "1h" }));
    case "failed": {
      const id = await enqueued(jobs.failing.enqueue({ n: 1 }, { queue: "damaged" }));
      await firm.drain({ queues: "damaged" });
      return id;
    }
    case "finished": {
      const id = await enqueued(jobs.plain.enqueue({ n: 1 }, { queue: "damaged" }));
      await firm.drain({ queues: "damaged" });
      return id;
    }
    case "claimed": {
      const id = await enqueued(jobs.plain.enqueue({ n: 1 }, { queue: "damaged-claimed" }));
      const processId = await registerProcess(db, { kind: "Worker", name: "fuzz-worker" }, new Date());
      await db.deleteFrom("firm_queue_ready_executions").where("job_id", "=", id).execute();
      await db
        .insertInto("firm_queue_claimed_executions")
        .values({ job_id: id, process_id: processId, created_at: new Date(), started_at: null })
        .execute();
      return id;
    }
  }
}

const EXECUTION_TABLES = [
  "firm_queue_ready_executions",
  "firm_queue_claimed_executions",
  "firm_queue_scheduled_executions",
  "firm_queue_blocked_executions",
  "firm_queue_failed_executions",
  "firm_queue_throttled_executions",
] as const;

/** Alter the rows of job `id` (or its neighbours) as `d` says, with plain SQL the library does not see. */
async function apply(db: Db, firm: FirmQueue, id: number, d: Damage): Promise<void> {
  switch (d.kind) {
    case "job text":
      await db
        .updateTable("firm_queue_jobs")
        .set({ [d.column]: d.value } as never)
        .where("id", "=", id)
        .execute();
      return;
    case "failure text":
      // On a job that is not failed there is no failure row: the damage then adds one, with the text.
      if ((await db.selectFrom("firm_queue_failed_executions").select("id").where("job_id", "=", id).execute()).length)
        await db.updateTable("firm_queue_failed_executions").set({ error: d.value }).where("job_id", "=", id).execute();
      else
        await removeExecutions(db, id).then(() =>
          db
            .insertInto("firm_queue_failed_executions")
            .values({ job_id: id, error: d.value, created_at: new Date() })
            .execute(),
        );
      return;
    case "no execution row":
      await removeExecutions(db, id);
      await db.updateTable("firm_queue_jobs").set({ finished_at: null }).where("id", "=", id).execute();
      return;
    case "two execution rows": {
      const inFailed = await db
        .selectFrom("firm_queue_failed_executions")
        .select("id")
        .where("job_id", "=", id)
        .execute();
      if (inFailed.length === 0)
        await db
          .insertInto("firm_queue_failed_executions")
          .values({ job_id: id, error: '{"name":"Error","message":"a second state"}', created_at: new Date() })
          .execute();
      else
        await db
          .insertInto("firm_queue_ready_executions")
          .values({ job_id: id, queue_name: "damaged", priority: 0, created_at: new Date() })
          .execute();
      return;
    }
    case "claim row deleted":
      await db.deleteFrom("firm_queue_claimed_executions").where("job_id", "=", id).execute();
      await db.deleteFrom("firm_queue_ready_executions").where("job_id", "=", id).execute();
      return;
    case "claim of no process":
    case "claim with process NULL": {
      await removeExecutions(db, id);
      await db.updateTable("firm_queue_jobs").set({ finished_at: null }).where("id", "=", id).execute();
      await db
        .insertInto("firm_queue_claimed_executions")
        .values({
          job_id: id,
          process_id: d.kind === "claim with process NULL" ? null : 987_654_321,
          created_at: new Date(),
          started_at: new Date(),
        })
        .execute();
      return;
    }
    case "unknown job name":
      await db.updateTable("firm_queue_jobs").set({ class_name: d.value }).where("id", "=", id).execute();
      return;
    case "process metadata": {
      const processId = await registerProcess(db, { kind: "Worker", name: "damaged-metadata" }, new Date());
      await db.updateTable("firm_queue_processes").set({ metadata: d.value }).where("id", "=", processId).execute();
      return;
    }
    case "recurring arguments": {
      await firm.recurring.schedule(`damaged-${id}`, { job: "plain", schedule: "0 0 1 1 *", args: { n: 1 } });
      await db
        .updateTable("firm_queue_recurring_tasks")
        .set({ arguments: d.value })
        .where("key", "=", `damaged-${id}`)
        .execute();
      return;
    }
  }
}

async function emptyTables(db: Db): Promise<void> {
  for (const table of [
    "firm_queue_jobs",
    "firm_queue_processes",
    "firm_queue_recurring_tasks",
    "firm_queue_job_keys",
  ] as const)
    await db.deleteFrom(table).execute();
}

async function removeExecutions(db: Db, id: number): Promise<void> {
  for (const table of EXECUTION_TABLES)
    await db
      .deleteFrom(table as "firm_queue_ready_executions")
      .where("job_id", "=", id)
      .execute();
}

/** The CLI's readers of a job; each case runs two of them (a run opens its own connections). */
function cliLines(id: number, picks: readonly number[]): string[][] {
  const lines = [
    ["jobs", "show", String(id)],
    ["jobs", "show", String(id), "--json"],
    ["jobs", "list"],
    ["jobs", "list", "--state", "claimed", "--json"],
    ["failed", "list"],
    ["processes", "list"],
    ["recurring"],
  ];
  return picks.map((pick) => lines[pick % lines.length]!);
}
const cliPick = fc.array(fc.nat({ max: 6 }), { minLength: 2, maxLength: 2 });

/** Dashboard pages beside the job's own; each case asks for three. */
const PAGES = ["/", "/jobs", "/failed", "/processes", "/recurring", "/jobs?state=claimed", "/jobs?state=finished"];
const pagePick = fc.shuffledSubarray(PAGES, { minLength: 3, maxLength: 3 });

/**
 * Cases earlier runs found, run first every time. Each failed before its fix: stored error text
 * that is JSON but not an error's shape broke the failed-jobs page (a 500: a message that was not
 * text); process metadata that is not JSON made every reader of processes (the dashboard, the CLI,
 * crash recovery) throw a SyntaxError; a failed job put back in line by hand (a ready row beside
 * its failed one) failed again with a unique-key error its worker retried for ever, the job
 * held claimed and the drain never ending; a date tag without its date decoded to an invalid
 * Date (the job ran, and its result could not be stored), where it is a DeserializationError.
 */
const FOUND: [State, Damage, number[], string[]][] = [
  ["failed", { kind: "failure text", value: '{"name":5,"message":{"a":1}}' }, [4, 0], ["/failed", "/", "/jobs"]],
  ["ready", { kind: "job text", column: "last_error", value: "5" }, [0, 1], ["/failed", "/", "/jobs"]],
  ["ready", { kind: "process metadata", value: " " }, [5, 0], ["/processes", "/", "/jobs"]],
  ["failed", { kind: "two execution rows" }, [0, 0], ["/", "/jobs", "/failed"]],
  ["ready", { kind: "job text", column: "arguments", value: '{"$firm":"date"}' }, [0, 0], ["/", "/jobs", "/failed"]],
];

/** `call`'s value, or null when it refused with a named error (anything else fails the test). */
async function shownOrRefused<T>(call: () => Promise<T>, what: () => string): Promise<T | null> {
  try {
    return await call();
  } catch (error) {
    expectNamedError(error, what);
    return null;
  }
}

/** A drain that does not end is a worker looping on the damaged job. */
function withinSeconds<T>(seconds: number, work: Promise<T>, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what()}: did not end within ${seconds} s`)), seconds * 1000);
    }),
  ]).finally(() => clearTimeout(timer));
}

describeEachDatabase("readers and workers over rows altered behind the library's back", (env) => {
  test(
    "getJob, firm.inspect, the dashboard and the CLI show a damaged row or refuse it by name; a worker fails it by name and runs the rest",
    async () => {
      const logger = capturingLogger();
      const firm = env.firm({ logger });
      const jobs = define(firm);
      const db = await env.db();
      const dashboard = createDashboard({ firm, allowUnauthenticated: true });
      await fc.assert(
        fc.asyncProperty(startState, damage, cliPick, pagePick, async (state, d, cliPicks, pagePicks) => {
          // Each case on empty tables, so that a counterexample replays alone.
          await emptyTables(db);
          const id = await jobIn(firm, jobs, db, state);
          await apply(db, firm, id, d);
          const what = () => `job ${id}, ${state}, damaged by ${show(d)}`;

          await shownOrRefused(() => firm.getJob(id), what);
          await shownOrRefused(() => firm.inspect.job(id), what);
          for (const listed of STATES) await shownOrRefused(() => firm.inspect.jobs({ state: listed }), what);
          await shownOrRefused(() => firm.inspect.queues(), what);
          await shownOrRefused(() => firm.inspect.processes(), what);
          await shownOrRefused(() => firm.inspect.recurringTasks(), what);
          await shownOrRefused(() => firm.failedJobs.list(), what);
          await shownOrRefused(() => firm.recurring.list(), what);

          for (const path of [`/jobs/${id}`, ...pagePicks]) {
            const response = await dashboard.fetch(new Request(`http://localhost${path}`));
            const text = await response.text();
            const logged = () => JSON.stringify(logger.lines.filter((line) => line.level === "error").slice(-2));
            expect(response.status, `${what()}: GET ${path}\n${logged()}`).toBeLessThan(500);
            expect(leaksInternals(text), `${what()}: GET ${path}`).toBe(false);
          }

          const cliEnv = { FIRM_QUEUE_DATABASE_URL: env.url, FIRM_QUEUE_LOG_LEVEL: "error" };
          for (const args of cliLines(id, cliPicks)) {
            const run = await runCliInProcess(args, cliEnv);
            const shown = `${what()}: firm-queue ${args.join(" ")} exited ${run.code}\n${run.stderr.slice(0, 400)}`;
            if (run.escaped !== undefined) expectNamedError(run.escaped, () => shown);
            expect([0, 1], shown).toContain(run.code);
            expect(run.stderr, shown).not.toMatch(/\n\s+at .*:\d+:\d+/);
          }

          // A worker: the damaged job fails by name (or is left alone when it is not its to run), the healthy one runs.
          const healthy = await enqueued(jobs.plain.enqueue({ n: 2 }, { queue: "damaged" }));
          await withinSeconds(15, firm.drain({ queues: "*" }), what);
          expect((await firm.getJob(healthy))?.state, what()).toBe("finished");
          if (state === "ready" && d.kind === "job text" && d.column === "arguments") {
            const after = await firm.getJob(id);
            if (after?.state === "failed")
              expect(after.error?.name, what()).toMatch(/^(Deserialization|InvalidJobArguments)Error$/);
            else expect(after?.state, what()).toBe("finished");
          }
        }),
        { ...fuzzParameters(), examples: FOUND },
      );
    },
    FUZZ_CASE_TIMEOUT_MS,
  );
});
