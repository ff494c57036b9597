import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resolveCliConfig, type CliFlags } from "../src/cli/config.js";
import { resolveRecurringTasks } from "../src/definitions/recurring-task.js";
import { ConfigurationError, FirmQueue, silentLogger } from "../src/index.js";
import {
  anyValue,
  expectNamedError,
  FUZZ_CASE_TIMEOUT_MS,
  hostileNumber,
  hostileOptions,
  hostileText,
  materialize,
  optionValue,
  show,
} from "./support/fuzz-inputs.js";
import { fuzzParameters } from "./support/hostile-requests.js";
import { runCli } from "./support/processes.js";

/*
 * The settings `firm-queue start` and `check` read (a config module, FIRM_QUEUE_* variables,
 * flags), and the variables `new FirmQueue()` reads, under fuzzed contents: each is accepted or
 * refused with a ConfigurationError (a subclass included) that the CLI prints as one line.
 */

/** Where the config module under fuzz finds the contents of the case (its default export is a function, called on every load). */
const SLOT = "__firmQueueFuzzConfig";

interface Slot {
  /** What the default-exported function returns. */
  value?: unknown;
  /** Instead: it throws (sync) or rejects (async) with an error of this kind. */
  fails?: "throws TypeError" | "rejects RangeError" | "throws a string";
}

const CONFIG_MODULE = `export default () => {
  const slot = globalThis.${SLOT} ?? {};
  if (slot.fails === "throws TypeError") throw new TypeError("a config function that throws");
  if (slot.fails === "rejects RangeError") return Promise.reject(new RangeError("a config function that rejects"));
  if (slot.fails === "throws a string") throw "a bare string";
  return slot.value;
};
`;

/** Text a duration setting might hold: right, nearly right, or not a duration. */
const durationLike = fc.oneof(
  fc.constantFrom(
    "5s",
    "100ms",
    "1m",
    "2h",
    "0ms",
    "1e3ms",
    "0x10s",
    " 5s",
    "-1s",
    ".5s",
    "5",
    "5 s",
    "Infinitys",
    "1y",
  ),
  fc.nat({ max: 600_000 }),
  hostileNumber,
);

const urlLike = fc.constantFrom(
  "sqlite::memory:",
  "sqlite:fuzz.sqlite3",
  "postgres://user@127.0.0.1:1/db",
  "mysql://user:pw@127.0.0.1:1/db",
  "postgres://",
  "redis://localhost",
  "sqlite:",
  "not a url",
  "http://[",
  "mysql://u@h/db?ssl=%zz",
);

const workerOptions = hostileOptions({
  queues: optionValue(
    fc.oneof(fc.constantFrom("*", "mail", "reports*", "a,b"), fc.array(hostileText, { maxLength: 2 })),
  ),
  concurrency: optionValue(fc.integer({ min: -1, max: 5 })),
  processes: optionValue(fc.integer({ min: -1, max: 3 })),
  pollingInterval: optionValue(durationLike),
  prefetch: optionValue(fc.integer({ min: -1, max: 10 })),
});

const dispatcherOptions = hostileOptions({
  pollingInterval: optionValue(durationLike),
  batchSize: optionValue(fc.integer({ min: -1, max: 1000 })),
  clearFinishedJobsInterval: optionValue(durationLike),
  clearFinishedJobsBatchSize: optionValue(fc.integer({ min: -1, max: 1000 })),
  concurrencyMaintenanceInterval: optionValue(fc.oneof(durationLike, fc.constant(false))),
});

const recurringTask = hostileOptions({
  job: optionValue(fc.constantFrom("report", "mail", "undefined job", "")),
  schedule: optionValue(fc.constantFrom("* * * * *", "*/5 * * * *", "every minute", "61 * * * *", "@hourly", "")),
  timezone: optionValue(fc.constantFrom("UTC", "Europe/Paris", "Mars/Olympus", "")),
  args: anyValue,
  queue: optionValue(fc.constantFrom("default", "mail")),
  priority: optionValue(fc.integer({ min: -5, max: 5 })),
  description: optionValue(fc.constantFrom("nightly report", "")),
});

/** A config module's default export: every key it may hold, with plausible or hostile values, or not an object at all. */
const configContents = hostileOptions({
  databaseUrl: optionValue(urlLike),
  listenUrl: optionValue(urlLike),
  tablePrefix: optionValue(fc.constantFrom("firm_queue_", "app_", "", "a-b", "X", "1x_", "a".repeat(80))),
  jobs: optionValue(fc.array(fc.constantFrom("jobs.ts", "./a.mjs", "", "../x.js"), { maxLength: 2 })),
  mode: optionValue(fc.constantFrom("fork", "async", "thread")),
  logLevel: optionValue(fc.constantFrom("debug", "info", "warn", "error", "trace", "")),
  logFormat: optionValue(fc.constantFrom("text", "json", "yaml")),
  workers: optionValue(fc.array(workerOptions, { maxLength: 2 })),
  dispatchers: optionValue(fc.array(dispatcherOptions, { maxLength: 2 })),
  shutdownTimeout: optionValue(durationLike),
  processHeartbeatInterval: optionValue(durationLike),
  processAliveThreshold: optionValue(durationLike),
  recurring: optionValue(fc.dictionary(fc.oneof(fc.constantFrom("nightly", "hourly"), hostileText), recurringTask)),
  scheduler: optionValue(
    hostileOptions({ dynamicTasks: optionValue(fc.boolean()), pollingInterval: optionValue(durationLike) }),
  ),
});

/** Text a variable or flag holds: plausible for its setting, or hostile (an environment cannot hold NUL). */
const settingText = fc
  .oneof(
    fc.constantFrom("1", "0", "-1", "3", "1.5", "1e3", "0x10", "007", " 2", "9007199254740993", "", " "),
    fc.constantFrom("5s", "100ms", "1m", "-1s", "0ms", "forever", "1e400ms"),
    fc.constantFrom("fork", "async", "*", "mail,reports*", ",,", "a\\b", "firm_queue_", "app_", "bad-prefix"),
    fc.constantFrom("sqlite::memory:", "postgres://u@127.0.0.1:1/db", "redis://x", "not a url"),
    hostileText,
  )
  .map((text) => text.replaceAll("\0", ""));

/** The FIRM_QUEUE_* variables resolveCliConfig reads, each set or not. */
const CLI_VARIABLES = [
  "FIRM_QUEUE_DATABASE_URL",
  "FIRM_QUEUE_LISTEN_URL",
  "FIRM_QUEUE_TABLE_PREFIX",
  "FIRM_QUEUE_MODE",
  "FIRM_QUEUE_SHUTDOWN_TIMEOUT",
  "FIRM_QUEUE_PROCESS_HEARTBEAT_INTERVAL",
  "FIRM_QUEUE_PROCESS_ALIVE_THRESHOLD",
  "FIRM_QUEUE_QUEUES",
  "FIRM_QUEUE_CONCURRENCY",
  "FIRM_QUEUE_PROCESSES",
  "FIRM_QUEUE_POLLING_INTERVAL",
  "FIRM_QUEUE_PREFETCH",
  "FIRM_QUEUE_JOBS",
  "FIRM_QUEUE_LOG_FORMAT",
] as const;

/** The variables `new FirmQueue()` reads. */
const INSTANCE_VARIABLES = [
  "FIRM_QUEUE_DATABASE_URL",
  "FIRM_QUEUE_READ_URL",
  "FIRM_QUEUE_LISTEN_URL",
  "FIRM_QUEUE_TABLE_PREFIX",
  "FIRM_QUEUE_LOG_LEVEL",
  "FIRM_QUEUE_LOG_FORMAT",
  "FIRM_QUEUE_LOG_JOB_OUTCOMES",
] as const;

function variables(names: readonly string[]): fc.Arbitrary<Record<string, string>> {
  return fc.record(Object.fromEntries(names.map((name) => [name, settingText])), { requiredKeys: [] }) as fc.Arbitrary<
    Record<string, string>
  >;
}

/** The flags resolveCliConfig takes (as commander hands them over: text). */
const flags = fc.record(
  {
    mode: settingText,
    queues: settingText,
    concurrency: settingText,
    processes: settingText,
    pollingInterval: settingText,
    prefetch: settingText,
    shutdownTimeout: settingText,
    processHeartbeatInterval: settingText,
    processAliveThreshold: settingText,
    databaseUrl: settingText,
    listenUrl: settingText,
    tablePrefix: settingText,
  },
  { requiredKeys: [] },
);

const slot = fc.oneof(
  { weight: 8, arbitrary: configContents.map((value): Slot => ({ value })) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom("throws TypeError", "rejects RangeError", "throws a string")
      .map((fails): Slot => ({ fails: fails as Slot["fails"] })),
  },
);

/**
 * Cases earlier runs found, run first every time: each failed before its fix (a config function
 * that threw a TypeError or a string reached the CLI as it was, printed with its stack).
 */
const FOUND: [Slot, Record<string, string>, CliFlags][] = [
  [{ fails: "throws TypeError" }, {}, {}],
  [{ fails: "throws a string" }, {}, {}],
];

describe("configuration under fuzzed files, variables and flags", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "firm-queue-config-fuzz-"));
    writeFileSync(join(dir, "firm-queue.config.mjs"), CONFIG_MODULE);
  });
  afterAll(() => {
    delete (globalThis as Record<string, unknown>)[SLOT];
  });

  test(
    "a config module, FIRM_QUEUE_* variables and flags are accepted or refused with a ConfigurationError",
    async () => {
      await fc.assert(
        fc.asyncProperty(slot, variables(CLI_VARIABLES), flags, async (given, env, cliFlags) => {
          (globalThis as Record<string, unknown>)[SLOT] = given.fails ? given : { value: materialize(given.value) };
          const what = () => `config ${show(given)}\nenv ${show(env)}\nflags ${show(cliFlags)}`;
          try {
            const config = await resolveCliConfig(cliFlags, env, dir);
            // What `check` does next without a database: the recurring tasks against the jobs.
            resolveRecurringTasks(config.startOptions.recurring, ["report", "mail"]);
          } catch (error) {
            expectNamedError(error, what);
            expect(error, what()).toBeInstanceOf(ConfigurationError);
          }
        }),
        { ...fuzzParameters(), examples: FOUND },
      );
    },
    FUZZ_CASE_TIMEOUT_MS,
  );

  test(
    "the variables new FirmQueue() reads are accepted or refused with a ConfigurationError",
    async () => {
      const saved = { ...process.env };
      try {
        await fc.assert(
          fc.asyncProperty(variables(INSTANCE_VARIABLES), async (env) => {
            for (const name of INSTANCE_VARIABLES) delete process.env[name];
            Object.assign(process.env, env);
            try {
              // Its options are checked in the constructor; nothing connects until first use.
              await new FirmQueue({ logger: silentLogger }).close();
            } catch (error) {
              expectNamedError(error, () => `env ${show(env)}`);
              expect(error, show(env)).toBeInstanceOf(ConfigurationError);
            }
          }),
          fuzzParameters(),
        );
      } finally {
        for (const name of INSTANCE_VARIABLES) delete process.env[name];
        Object.assign(process.env, saved);
      }
    },
    FUZZ_CASE_TIMEOUT_MS,
  );

  test("firm-queue check refuses bad config modules and variables with exit status 1 and one line, no stack", async () => {
    const cases: { module: string; env?: Record<string, string> }[] = [
      { module: "export default () => { throw new TypeError('boom'); };" },
      { module: "export default { workers: [{ concurrency: -1 }] };" },
      { module: "export default { nonsense: true };" },
      { module: "export default [1, 2];" },
      { module: "export const x = 1;" },
      { module: "export default {", env: {} },
      { module: "export default {};", env: { FIRM_QUEUE_CONCURRENCY: "1.5" } },
      { module: "export default {};", env: { FIRM_QUEUE_POLLING_INTERVAL: "soon" } },
    ];
    const results = await Promise.all(
      cases.map(async (c, index) => {
        const caseDir = mkdtempSync(join(tmpdir(), `firm-queue-check-fuzz-${index}-`));
        const path = join(caseDir, "firm-queue.config.mjs");
        writeFileSync(path, c.module);
        return { c, result: await runCli(["check", "--config", path], { ...c.env }) };
      }),
    );
    for (const { c, result } of results) {
      const what = `${c.module} ${JSON.stringify(c.env ?? {})}\n${result.stderr}`;
      expect(result.code, what).toBe(1);
      const lines = result.stderr.trim().split("\n");
      expect(lines, what).toHaveLength(1);
      expect(lines[0], what).toMatch(/^firm-queue: \S/);
      expect(result.stderr, what).not.toMatch(/\n\s+at /);
    }
  });
});
