import { expect, it } from "vitest";
import { type JobArguments, silentLogger } from "../src/index.js";
import { enqueueJobs } from "../src/lifecycle/enqueue.js";
import { JobPolicies } from "../src/definitions/job-policies.js";
import { JobRegistry } from "../src/definitions/job-registry.js";
import { describeEachDatabase } from "./support/harness.js";

/** Arguments whose text needs quoting in SQL, in array literals or in JSON. */
const AWKWARD = [
  '"quoted"',
  "back\\slash",
  "{braces},commas",
  "NULL",
  "",
  "multi\nline",
  "émoji 🚀",
  "tab\there",
  "'single'",
];

describeEachDatabase("enqueueing jobs due now", (env) => {
  it("keeps input order, arguments, queues and priorities, and makes every job ready", async () => {
    const firm = env.firm();
    const job = firm.defineJob("awkward", async () => {});
    const args = Array.from({ length: 45 }, (_, n) => ({ n, text: AWKWARD[n % AWKWARD.length] }));
    const ids = (
      await Promise.all([
        job.enqueueAll(args.slice(0, 30)),
        job.enqueueAll(args.slice(30), { queue: "other", priority: 7 }),
      ])
    )
      .flat()
      .map((result) => result.id);
    expect(new Set(ids).size).toBe(45);
    expect(ids.slice(0, 30)).toEqual([...ids.slice(0, 30)].sort((a, b) => a - b));
    for (const [index, id] of ids.entries()) {
      const info = await firm.getJob(id);
      expect(info).toMatchObject({
        state: "ready",
        arguments: args[index],
        queue: index < 30 ? "default" : "other",
        priority: index < 30 ? 0 : 7,
      });
    }
    const ready = await (await env.db())
      .selectFrom("firm_queue_ready_executions")
      .select(["job_id", "queue_name", "priority"])
      .orderBy("job_id")
      .execute();
    expect(ready.map((row) => [Number(row.job_id), row.queue_name, row.priority])).toEqual(
      [...ids]
        .sort((a, b) => a - b)
        .map((id) => [id, ids.indexOf(id) < 30 ? "default" : "other", ids.indexOf(id) < 30 ? 0 : 7]),
    );
  });

  it("stores any argument value, queue name and job name as the general path does", async () => {
    const firm = env.firm();
    // Queue and job names with JSON escapes, array-literal syntax and characters outside the BMP
    // (a surrogate pair each; a lone surrogate is refused at definition).
    const queue = "q\"\\{x}NULL'é🚀\ud83d\ude80";
    const job = firm.defineJob('name"\\{}\ud83d\ude00', async () => {});
    const values: JobArguments[] = [
      "plain string",
      'a "quoted" \\ string\n',
      "\u001e",
      42,
      -1.5,
      0,
      true,
      null,
      [],
      {},
      [1, "two", null, [3]],
      { lone: "\ud800", nul: "\u0000", separator: "a\u001eb", nested: { deep: ["é🚀"] } },
    ];
    // Every job's own queue and priority (each column sent per job), and one queue for all.
    const own = (index: number) => ({ queue: index % 2 === 0 ? queue : `${queue}-${index}`, priority: index - 3 });
    const batches = [{ each: values.map((_, index) => own(index)) }, { queue, priority: -3, each: undefined }];
    for (const { each, ...shared } of batches) {
      const ready = await job.enqueueAll(values, { ...shared, each });
      // The same jobs through the general path (scheduled, so not the single ready statement).
      const scheduled = await job.enqueueAll(values, { ...shared, wait: "1h", each });
      for (const [index, value] of values.entries()) {
        const [now, later] = [await firm.getJob(ready[index]!.id), await firm.getJob(scheduled[index]!.id)];
        expect(now).toMatchObject({ state: "ready", arguments: value });
        expect(later).toMatchObject({ state: "scheduled", arguments: value });
        expect([now?.queue, now?.name, now?.priority]).toEqual([later?.queue, later?.name, later?.priority]);
        expect(now?.priority).toBe(each ? index - 3 : -3);
        expect(now?.queue).toBe(each && index % 2 === 1 ? `${queue}-${index}` : queue);
      }
    }
  });

  it("a batch of several job names keeps each job's own name, queue and priority", async () => {
    const firm = env.firm();
    const definitions = [
      firm.defineJob("mixed-a", async () => {}, { queue: "qa", priority: 1 }),
      firm.defineJob('mixed-b"\ud83d\ude00', async () => {}, { queue: "qb\ud83d\ude80", priority: -2 }),
    ];
    const database = await firm.database();
    const policies = new JobPolicies(new JobRegistry(), silentLogger);
    const requests = [0, 1, 2, 3, 4].map((n) => {
      const definition = definitions[n % 3 === 0 ? 0 : 1]!;
      return { name: definition.name, args: { n }, defaults: definition.options };
    });
    const ready = await enqueueJobs(database, policies, requests);
    const scheduled = await enqueueJobs(
      database,
      policies,
      requests.map((request) => ({ ...request, options: { wait: "1h" } })),
    );
    for (const [n, request] of requests.entries()) {
      const [now, later] = [await firm.getJob(ready[n]!.id!), await firm.getJob(scheduled[n]!.id!)];
      expect(now).toMatchObject({ state: "ready", arguments: { n }, priority: request.defaults.priority });
      expect([now?.queue, now?.name, now?.priority]).toEqual([later?.queue, later?.name, later?.priority]);
    }
  });

  it("one job at a time gets ascending ids and runs", async () => {
    const firm = env.firm();
    const seen: unknown[] = [];
    const job = firm.defineJob("single", async (args: { text: string }) => void seen.push(args.text));
    const ids: number[] = [];
    for (const text of AWKWARD) ids.push((await job.enqueue({ text })).id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    await firm.drain();
    expect(seen).toEqual(AWKWARD);
  });
});
