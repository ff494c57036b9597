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

  it("start({ workers: [{ execArgv }] }): the worker's own flags, none with [], and bad values refused by name", async () => {
    const firm = env.firm();
    const ownLimitMb = Math.round(getHeapStatistics().heap_size_limit / 2 ** 20);
    const flagsOfAWorker = async (execArgv: readonly string[] | undefined): Promise<NodeFlags> => {
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
      }
    };
    const given = await flagsOfAWorker([OLD_SPACE_FLAG]);
    expect(given.execArgv.at(-1)).toBe(OLD_SPACE_FLAG);
    expect(given.heapSizeLimitMb).toBeLessThan(300);
    // The defaults (none) and an empty list: the child runs with the supervisor's flags alone.
    const inherited = process.execArgv.filter((flag) => !flag.startsWith("--inspect"));
    for (const execArgv of [undefined, []]) {
      const flags = await flagsOfAWorker(execArgv);
      expect(flags.execArgv.slice(0, inherited.length)).toEqual(inherited);
      expect(flags.execArgv).not.toContain(OLD_SPACE_FLAG);
      expect(flags.heapSizeLimitMb).toBe(ownLimitMb);
    }
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
