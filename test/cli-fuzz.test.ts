import fc from "fast-check";
import { expect, test } from "vitest";
import type { FirmQueue } from "../src/index.js";
import { runCliInProcess, type CliRun } from "./support/cli-in-process.js";
import { expectNamedError, FUZZ_CASE_TIMEOUT_MS, hostileText, tableCounts } from "./support/fuzz-inputs.js";
import { describeEachDatabase } from "./support/harness.js";
import { fuzzParameters } from "./support/hostile-requests.js";

/*
 * The CLI's commands under fuzzed command lines, run in this process (test/support/cli-in-process):
 * every run ends with exit status 0, 1 or 2, a refusal says what is wrong on its first line, no
 * error reaches the CLI's last-resort handler unnamed (it would be printed with its stack), and a
 * command line refused as wrong (status 2) writes nothing.
 */

/** What a command-line argument can be: each kind has plausible values and broken ones. */
type Kind =
  | "id"
  | "count"
  | "number"
  | "duration"
  | "json"
  | "text"
  | "state"
  | "rate"
  | "cursor"
  | "mode"
  | "path"
  | "dialect"
  | "flag";

/** Text as a command line can carry it: no NUL, no lone surrogate (the OS hands over bytes, Node decodes them). */
const argvText = hostileText.map((text) =>
  text
    .replaceAll("\0", "")
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD"),
);

const deepJson = `${"[".repeat(3000)}${"]".repeat(3000)}`;

const VALUES: Record<Exclude<Kind, "flag">, fc.Arbitrary<string>> = {
  id: fc.oneof(
    fc.integer({ min: 1, max: 12 }).map(String),
    fc.constantFrom("0", "-1", "1.5", "1e3", "0x1", "abc", "", " 1", "99999999999999999999", "9007199254740993"),
  ),
  count: fc.constantFrom("1", "2", "50", "500", "501", "0", "-1", "1.5", "abc", "1e2", "", "Infinity"),
  number: fc.constantFrom("0", "5", "-5", "1.5", "abc", "1e309", "", "2147483648", "-0"),
  duration: fc.constantFrom("5s", "100ms", "0ms", "1m", "-1s", "soon", "5", "1e3ms", "", "1e400ms", "99999999999d"),
  json: fc.oneof(
    fc.json({ maxDepth: 3 }),
    fc.constantFrom("{", "[1,", "NaN", "undefined", "", '{"__proto__":{"x":1}}', '"\\ud800"', '"\\u0000"', deepJson),
  ),
  text: fc.oneof(fc.constantFrom("default", "mail", "plain", "failing", "*", "a*", ""), argvText),
  state: fc.constantFrom("ready", "scheduled", "blocked", "claimed", "failed", "finished", "cancelled", "nonsense", ""),
  rate: fc.constantFrom("10/1s", "0/1s", "1/0s", "5/1m", "abc", "10/", "/1s", "1.5/1s", "-1/1s", "1/1s/1s", "1e9/1ms"),
  cursor: fc.oneof(
    fc.json({ maxDepth: 2 }).map((json) => Buffer.from(json).toString("base64url")),
    fc.constantFrom("abc", "", "%%", "eyJ9"),
  ),
  mode: fc.constantFrom("fork", "async", "thread", ""),
  path: fc.constantFrom("no-such-module.mjs", "test", "package.json", "", "test/fixtures/no-such.ts"),
  dialect: fc.constantFrom("sqlite", "postgres", "mysql", "oracle"),
};

interface CommandShape {
  readonly words: readonly string[];
  /** Positional arguments, in order; the fuzz leaves some out and adds others. */
  readonly positional: readonly Exclude<Kind, "flag">[];
  readonly options: Readonly<Record<string, Kind>>;
}

const START_FLAGS: Record<string, Kind> = {
  "--mode": "mode",
  "--queues": "text",
  "--concurrency": "number",
  "--processes": "number",
  "--polling-interval": "duration",
  "--prefetch": "number",
  "--shutdown-timeout": "duration",
  "--process-heartbeat-interval": "duration",
  "--process-alive-threshold": "duration",
  "--hosts": "count",
  "--config": "path",
  "--require": "path",
  "--table-prefix": "text",
  "--max-latency": "duration",
  "--queue": "text",
};

/** The commands under fuzz (not those that run until stopped: start, dashboard, top), with the options each takes. */
const COMMANDS: readonly CommandShape[] = [
  {
    words: ["jobs", "list"],
    positional: [],
    options: {
      "--state": "state",
      "--queue": "text",
      "--name": "text",
      "--key": "text",
      "--limit": "count",
      "--cursor": "cursor",
      "--json": "flag",
    },
  },
  { words: ["jobs", "show"], positional: ["id"], options: { "--json": "flag" } },
  {
    words: ["jobs", "enqueue"],
    positional: ["text"],
    options: {
      "--args": "json",
      "--queue": "text",
      "--priority": "number",
      "--wait": "duration",
      "--key": "text",
      "--undeclared": "flag",
      "--json": "flag",
    },
  },
  { words: ["jobs", "retry"], positional: ["id", "id"], options: { "--json": "flag" } },
  {
    words: ["jobs", "cancel"],
    positional: ["id"],
    options: {
      "--queue": "text",
      "--name": "text",
      "--key": "text",
      "--batch-size": "count",
      "--yes": "flag",
      "--json": "flag",
    },
  },
  { words: ["queues", "list"], positional: [], options: { "--json": "flag" } },
  { words: ["queues", "pause"], positional: ["text"], options: { "--json": "flag" } },
  { words: ["queues", "resume"], positional: ["text"], options: { "--json": "flag" } },
  {
    words: ["queues", "clear"],
    positional: ["text"],
    options: { "--yes": "flag", "--batch-size": "count", "--json": "flag" },
  },
  { words: ["queues", "limit"], positional: ["text", "rate"], options: { "--json": "flag" } },
  { words: ["queues", "unlimit"], positional: ["text"], options: { "--json": "flag" } },
  {
    words: ["failed", "list"],
    positional: [],
    options: { "--name": "text", "--queue": "text", "--limit": "count", "--after": "id", "--json": "flag" },
  },
  {
    words: ["failed", "retry"],
    positional: ["id"],
    options: { "--all": "flag", "--name": "text", "--queue": "text", "--batch-size": "count" },
  },
  {
    words: ["failed", "delete"],
    positional: ["id"],
    options: { "--yes": "flag", "--all": "flag", "--name": "text", "--queue": "text", "--batch-size": "count" },
  },
  {
    words: ["stats"],
    positional: [],
    options: { "--alive-threshold": "duration", "--failures": "count", "--json": "flag" },
  },
  { words: ["processes", "list"], positional: [], options: { "--alive-threshold": "duration", "--json": "flag" } },
  { words: ["recurring"], positional: [], options: { "--json": "flag" } },
  { words: ["migrate"], positional: [], options: { "--status": "flag", "--print-sql": "dialect" } },
  { words: ["check"], positional: [], options: { ...START_FLAGS, "--live": "flag" } },
  { words: ["drain"], positional: [], options: { "--queues": "text", "--concurrency": "count", "--require": "path" } },
];

/** A value for an argument of `kind`: mostly its own kind, sometimes another's or hostile text. */
function argumentValue(kind: Exclude<Kind, "flag">): fc.Arbitrary<string> {
  return fc.oneof({ weight: 4, arbitrary: VALUES[kind] }, { weight: 1, arbitrary: argvText });
}

/** Tokens that do not belong: unknown options, a stray word, the end of options, a flag given a value. */
const stray = fc.oneof(
  fc.constantFrom("--nope", "-z", "--", "--json=1", "-", "--queue", "--help", "-h", "--version", "help"),
  argvText,
);

/** One option with its value (a flag alone), sometimes without the value it needs. */
function optionTokens(name: string, kind: Kind): fc.Arbitrary<string[]> {
  if (kind === "flag") return fc.constant<string[]>([name]);
  return fc.oneof(
    { weight: 6, arbitrary: argumentValue(kind).map((value) => [name, value]) },
    { weight: 1, arbitrary: argumentValue(kind).map((value) => [`${name}=${value}`]) },
    { weight: 1, arbitrary: fc.constant<string[]>([name]) },
  );
}

const commandLine: fc.Arbitrary<string[]> = fc.constantFrom(...COMMANDS).chain((shape) =>
  fc
    .tuple(
      fc.tuple(...shape.positional.map((kind) => fc.option(argumentValue(kind), { nil: undefined, freq: 6 }))),
      fc
        .shuffledSubarray(Object.entries(shape.options), { maxLength: Math.min(4, Object.keys(shape.options).length) })
        .chain((options) => fc.tuple(...options.map(([name, kind]) => optionTokens(name, kind)))),
      fc.array(stray, { maxLength: 1 }),
      fc.nat({ max: 3 }),
    )
    .map(([positional, options, extra, at]) => {
      const words = [...shape.words];
      const rest = [...positional.filter((value) => value !== undefined), ...options.flat()];
      rest.splice(Math.min(at, rest.length), 0, ...extra);
      return [...words, ...rest];
    }),
);

/** Something for every command to act on: ready jobs in two queues, a scheduled one, a failed one, a paused queue. */
async function seed(firm: FirmQueue): Promise<void> {
  const plain = firm.defineJob("plain", async () => {});
  const failing = firm.defineJob(
    "failing",
    async () => {
      throw new Error("expected failure");
    },
    { retry: { attempts: 1 } },
  );
  await plain.enqueue({ n: 1 });
  await plain.enqueue({ n: 2 }, { queue: "mail" });
  await plain.enqueue({ n: 3 }, { wait: "1h" });
  await failing.enqueue({ n: 4 }, { queue: "other" });
  await firm.drain({ queues: "other" });
  await firm.queues.pause("paused");
}

/**
 * Command lines with a known outcome, run before the random ones so every run reaches all three
 * statuses: one that works, one that fails (no job 99 was seeded), one refused as wrong.
 */
const EACH_OUTCOME: [string[]][] = [[["queues", "list"]], [["jobs", "show", "99"]], [["jobs", "list", "--nope"]]];

function describeRun(args: readonly string[], run: CliRun): string {
  return `firm-queue ${JSON.stringify(args)} exited ${run.code}\nstdout: ${run.stdout.slice(0, 600)}\nstderr: ${run.stderr.slice(0, 600)}`;
}

describeEachDatabase("the CLI under fuzzed command lines", (env) => {
  test(
    "every command line ends in status 0, 1 or 2 with a named refusal on one line and no stack; a usage error writes nothing",
    async () => {
      const firm = env.firm();
      await seed(firm);
      const db = await env.db();
      const statuses = new Set<number>();
      await fc.assert(
        fc.asyncProperty(commandLine, async (args) => {
          const before = await tableCounts(db);
          const run = await runCliInProcess(args, { FIRM_QUEUE_DATABASE_URL: env.url, FIRM_QUEUE_LOG_LEVEL: "error" });
          const what = () => describeRun(args, run);
          expect([0, 1, 2], what()).toContain(run.code);
          statuses.add(run.code);
          if (run.escaped !== undefined) expectNamedError(run.escaped, what);
          expect(run.stderr, what()).not.toMatch(/\n\s+at .*:\d+:\d+/);
          // An operation that failed and says so on stdout (a live check's FAIL line, a dropped job's JSON) writes no error.
          if (run.code === 1 && run.stderr === "") expect(run.stdout.trim(), what()).not.toBe("");
          else if (run.code !== 0) {
            const first = run.stderr.split("\n").find((line) => line.trim() !== "") ?? "";
            // A command group without its subcommand (a stray word ate it) answers with its usage.
            expect(first, what()).toMatch(/^(error: |firm-queue: |Nothing was |Usage: firm-queue )\S/);
          }
          if (run.code === 2) expect(await tableCounts(db), `${what()}\nwas refused but wrote`).toEqual(before);
        }),
        { ...fuzzParameters(), examples: EACH_OUTCOME },
      );
      // The command lines reach every outcome: some work, some fail, some are refused.
      expect([...statuses].sort()).toEqual([0, 1, 2]);
    },
    FUZZ_CASE_TIMEOUT_MS,
  );
});
