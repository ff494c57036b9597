import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { EnqueueResult } from "../src/index.js";
import { countRows, describeEachDatabase, waitFor } from "./support/harness.js";
import { spawnNode, type Spawned } from "./support/processes.js";

const PROCESSES = 4;
const PER_PROCESS = 4;

describeEachDatabase("unique jobs across processes", (env) => {
  it("several processes enqueue one key at the same moment: exactly one job is created", {
    timeout: 120_000,
  }, async () => {
    await env.firm().migrate();
    const dir = mkdtempSync(join(tmpdir(), "firm-unique-race-"));
    const processes: Spawned[] = [];
    try {
      for (const key of ["first", "second"]) {
        const go = join(dir, `go-${key}`);
        const round: Spawned[] = [];
        for (let i = 0; i < PROCESSES; i++) {
          round.push(
            spawnNode(["test/fixtures/enqueue-key-process.mjs"], {
              FIRM_QUEUE_DATABASE_URL: env.url,
              FIXTURE_KEY: key,
              FIXTURE_GO: go,
              FIXTURE_COUNT: String(PER_PROCESS),
            }),
          );
        }
        processes.push(...round);
        await waitFor(() => round.every((child) => child.output().includes("ready")), 60_000, "the processes ready");
        writeFileSync(go, "");
        const finished = await Promise.all(round.map((child) => child.finished));
        for (const done of finished) expect(done.code, done.stderr).toBe(0);
        const results = finished.flatMap(
          (done) => JSON.parse(done.stdout.trim().split("\n").at(-1)!) as EnqueueResult[],
        );
        expect(results).toHaveLength(PROCESSES * PER_PROCESS);
        const created = results.filter((result) => result.status === "created");
        expect(created).toHaveLength(1);
        expect(results.filter((result) => result.status === "duplicate").every((r) => r.id === created[0]!.id)).toBe(
          true,
        );
      }
      expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(2);
    } finally {
      for (const child of processes) child.child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
