import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { describeEachDatabase, enqueued } from "./support/harness.js";
import { startSupervisor, waitForProcesses, waitWhile } from "./support/supervised.js";

describeEachDatabase("fork supervisor boot", (env) => {
  it("a worker killed after registering but before reporting started is replaced; the start goes on", async () => {
    const firm = env.firm();
    const db = await env.db();
    const marker = join(mkdtempSync(join(tmpdir(), "firm-queue-boot-")), "killed");
    const run = startSupervisor(env, [], { KILL_ONE_WORKER_AT_START: marker });
    try {
      // The worker creates the file, then writes its pid: wait for the pid, not only the file.
      const markerPid = () => (existsSync(marker) ? Number(readFileSync(marker, "utf8")) : 0);
      await waitWhile(run, () => markerPid() > 0, "a worker killed during boot");
      const killedPid = markerPid();
      // The killed worker's row goes when it is reaped; its replacement registers.
      let rows = await waitForProcesses(db, run);
      await waitWhile(
        run,
        async () => {
          rows = await waitForProcesses(db, run);
          return rows.find((row) => row.kind === "Worker")!.pid !== killedPid;
        },
        "the replacement worker registered",
      );
      const worker = rows.find((row) => row.kind === "Worker")!;
      const id = await enqueued(firm.enqueue("record", null, { undeclared: true }));
      await waitWhile(run, async () => (await firm.getJob(id))?.state === "finished", "a job run by the replacement");
      expect(run.jobEvents()).toContain(`done ${id} ${worker.pid}`);
    } finally {
      run.child.kill("SIGTERM");
    }
    expect((await run.finished).code).toBe(0);
  });
});
