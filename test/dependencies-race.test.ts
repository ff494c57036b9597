import { fork, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { expect, it } from "vitest";
import { countRows, describeEachDatabase, waitFor } from "./support/harness.js";

/** Races run: 200 by default (10 rounds of 20); FIRM_QUEUE_DEPENDENCY_RACES for a longer run. */
const RACES = Number(process.env.FIRM_QUEUE_DEPENDENCY_RACES ?? "200");
const PER_ROUND = 20;

describeEachDatabase("job dependencies across worker processes", (env) => {
  it(`two processes finish the last two dependencies of a job at once, ${RACES} times: it runs once each time`, {
    timeout: 300_000,
  }, async () => {
    const firm = env.firm();
    await firm.migrate();
    const dependency = firm.defineJob("dependency", async () => {});
    const runs = new Map<number, number>();
    const dependent = firm.defineJob("dependent", async (_args: null, context) => {
      runs.set(context.jobId, (runs.get(context.jobId) ?? 0) + 1);
      const states = (await context.dependencyResults()).map((dep) => dep.state);
      if (states.some((state) => state !== "finished")) throw new Error(`ran before its dependencies: ${states}`);
    });
    const started = new Set<number>();
    const children: ChildProcess[] = ["a", "b"].map((queue) =>
      fork(join(import.meta.dirname, "fixtures/dependency-race-worker.mjs"), [], {
        env: {
          ...process.env,
          FIRM_QUEUE_DATABASE_URL: env.url,
          FIXTURE_QUEUE: queue,
          FIXTURE_CONCURRENCY: String(PER_ROUND),
        },
        stdio: ["ignore", "inherit", "inherit", "ipc"],
      }),
    );
    let ready = 0;
    for (const child of children)
      child.on("message", (message: unknown) => {
        if (message === "ready") ready++;
        else started.add((message as { started: number }).started);
      });
    try {
      await waitFor(() => ready === 2, 60_000, "both worker processes");
      const db = await env.db();
      for (let round = 0; round < RACES / PER_ROUND; round++) {
        const args = [...Array(PER_ROUND).keys()].map((n) => ({ n }));
        const as = (await dependency.enqueueAll(args, { queue: "a" })).map((result) => result.id!);
        const bs = (await dependency.enqueueAll(args, { queue: "b" })).map((result) => result.id!);
        const dependents = (
          await dependent.enqueueAll(
            args.map(() => null),
            { queue: "d", each: as.map((a, i) => ({ dependsOn: [a, bs[i]!] })) },
          )
        ).map((result) => result.id!);
        const pairs = as.map((a, i) => [a, bs[i]!]);
        const ids = pairs.flat();
        await waitFor(() => ids.every((id) => started.has(id)), 30_000, "every dependency running");
        for (const child of children) child.send("go");
        await waitFor(
          async () =>
            Number(
              (
                await db
                  .selectFrom("firm_queue_jobs")
                  .select((eb) => eb.fn.countAll<number>().as("n"))
                  .where("id", "in", ids)
                  .where("finished_at", "is not", null)
                  .executeTakeFirstOrThrow()
              ).n,
            ) === ids.length,
          30_000,
          "every dependency finished",
        );
        for (const id of dependents) expect((await firm.getJob(id))?.state).toBe("ready");
        expect(await countRows(db, "firm_queue_ready_executions")).toBe(PER_ROUND);
        expect(await firm.drain({ queues: "d", concurrency: PER_ROUND })).toBe(PER_ROUND);
        for (const id of dependents) expect(runs.get(id)).toBe(1);
      }
      expect(runs.size).toBe(RACES);
    } finally {
      for (const child of children) child.send("stop");
      await Promise.all(
        children.map(
          (child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.on("exit", resolve))),
        ),
      );
    }
  });
});
