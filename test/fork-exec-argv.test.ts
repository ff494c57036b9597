import { readFileSync } from "node:fs";
import { getHeapStatistics } from "node:v8";
import { expect, it } from "vitest";
import { ConfigurationError } from "../src/errors.js";
import { countRows, describeEachDatabase, enqueued } from "./support/harness.js";
import { startSupervisor, waitForProcesses } from "./support/supervised.js";

interface NodeFlags {
  readonly execArgv: string[];
  readonly heapSizeLimitMb: number;
}

/** The command line of a running process (Linux). */
const commandLine = (pid: number): string[] => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");

/**
 * What a child of a supervisor in this process inherits: this process's flags but the debugger's,
 * and the TypeScript loader (the tests run firm-queue from its sources).
 */
const inherited = (): string[] => [
  ...process.execArgv.filter((flag) => !flag.startsWith("--inspect")),
  "--import",
  expect.stringContaining("jiti-register") as unknown as string,
];

/** A heap limit no process here gets by default, so that reading it back proves V8 took the flag. */
const OLD_SPACE_FLAG = "--max-old-space-size=200";

describeEachDatabase("fork-mode worker node flags (execArgv)", (env) => {
  it("--exec-argv reaches the worker children, which run with it (V8's heap limit follows), and not the dispatcher", async () => {
    const firm = env.firm();
    const db = await env.db();
    const run = startSupervisor(env, [`--exec-argv=${OLD_SPACE_FLAG} --single-threaded-gc`]);
    try {
      const rows = await waitForProcesses(db, run);
      const id = await enqueued(firm.enqueue("node-flags", null, { undeclared: true }));
      const ended = await firm.waitFor(id, { timeout: 30_000 });
      expect(ended.state).toBe("finished");
      const flags = ended.result as NodeFlags;
      expect(flags.execArgv.slice(-2)).toEqual([OLD_SPACE_FLAG, "--single-threaded-gc"]);
      expect(flags.heapSizeLimitMb).toBeGreaterThanOrEqual(200);
      expect(flags.heapSizeLimitMb).toBeLessThan(300);
      const dispatcher = rows.find((row) => row.kind === "Dispatcher")!;
      expect(commandLine(dispatcher.pid)).not.toContain(OLD_SPACE_FLAG);
    } finally {
      run.child.kill("SIGTERM");
    }
    expect((await run.finished).code).toBe(0);
  });

  /** Start a fork-mode supervisor with one worker and no dispatcher; what flags does the worker's job see? */
  async function flagsOfAWorker(execArgv: readonly string[] | undefined): Promise<NodeFlags> {
    const firm = env.firm();
    const supervisor = await firm.start({
      mode: "fork",
      require: ["test/fixtures/process-jobs.ts"],
      workers: [{ pollingInterval: 50, ...(execArgv === undefined ? {} : { execArgv }) }],
      dispatchers: [],
      processHeartbeatInterval: 300,
      processAliveThreshold: 3000,
    });
    try {
      const id = await enqueued(firm.enqueue("node-flags", null, { undeclared: true }));
      const ended = await firm.waitFor(id, { timeout: 30_000 });
      expect(ended.state).toBe("finished");
      return ended.result as NodeFlags;
    } finally {
      await supervisor.stop();
      expect(await countRows(await env.db(), "firm_queue_processes")).toBe(0);
    }
  }

  it("start({ workers: [{ execArgv }] }): the worker's children run with its flags, after the supervisor's", async () => {
    const flags = await flagsOfAWorker([OLD_SPACE_FLAG]);
    expect(flags.execArgv.slice(0, inherited().length)).toEqual(inherited());
    expect(flags.execArgv.at(-1)).toBe(OLD_SPACE_FLAG);
    expect(flags.heapSizeLimitMb).toBeLessThan(300);
  });

  it.each([
    ["no execArgv (the defaults: none)", undefined],
    ["execArgv: []", []],
  ])("%s: the worker's children run with the supervisor's flags alone", async (_, execArgv) => {
    const flags = await flagsOfAWorker(execArgv);
    expect(flags.execArgv).toEqual(inherited());
    expect(flags.heapSizeLimitMb).toBe(Math.round(getHeapStatistics().heap_size_limit / 2 ** 20));
  });

  it("an execArgv that is not a list of non-empty strings is refused by name, before anything starts", async () => {
    const firm = env.firm();
    for (const bad of ["--max-old-space-size=200", [200], [""]]) {
      const refused = await firm
        .start({ mode: "fork", require: ["test/fixtures/process-jobs.ts"], workers: [{ execArgv: bad as never }] })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ConfigurationError);
      expect((refused as Error).message).toContain("workers[0].execArgv must be a list of node flags");
    }
    expect(await countRows(await env.db(), "firm_queue_processes")).toBe(0);
  });
});
