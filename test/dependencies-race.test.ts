import { expect, it } from "vitest";
import { countRows, describeEachDatabase, waitFor } from "./support/harness.js";
import { RaceWorkers } from "./support/race-workers.js";

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
    const workers = new RaceWorkers(env.url, PER_ROUND);
    try {
      await workers.whenReady();
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
        await workers.whenStarted(ids, "every dependency running");
        workers.release();
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
      await workers.stop();
    }
  });
});
