import { expect, it } from "vitest";
import type { Database } from "../src/database/connection.js";
import type { JobPolicies } from "../src/definitions/job-policies.js";
import { ProcessRowGoneError } from "../src/errors.js";
import { registerProcess } from "../src/models/process.js";
import { pruneDeadProcesses } from "../src/processes/crash-recovery.js";
import { claimJobs } from "../src/roles/claims.js";
import { QueueSelector } from "../src/roles/queue-selector.js";
import { countRows, describeEachDatabase, enqueued } from "./support/harness.js";

describeEachDatabase("a claim over several queues when the claimer's row goes", (env) => {
  it("hands back none of what the earlier queues claimed: whoever removed the row took those claims", async () => {
    const firm = env.firm();
    firm.defineJob("limited", async () => {}, {
      queue: "q1",
      concurrency: { key: () => "k", to: 1 },
      retry: { attempts: 3, backoff: 0 },
    });
    firm.defineJob("plain", async () => {}, { queue: "q2" });
    const first = await enqueued(firm.enqueue("limited", 1));
    const second = await enqueued(firm.enqueue("limited", 2));
    await enqueued(firm.enqueue("plain", null));
    expect((await firm.getJob(second))?.state).toBe("blocked");
    const database = await firm.database();
    const policies = (firm as unknown as { policies: JobPolicies }).policies;
    const processId = await registerProcess(database.db, { kind: "Worker", name: "w" }, new Date());
    // A supervisor that thinks this worker dead prunes it between its claims on q1 and q2.
    const claimReady = database.dialect.claimReady!;
    const racing: Database = {
      ...database,
      dialect: {
        ...database.dialect,
        claimReady: async (db, claim) => {
          const result = await claimReady(db, claim);
          if (claim.queue === "q1") await pruneDeadProcesses(database, policies, -60_000, null);
          return result;
        },
      },
    };

    await expect(claimJobs(racing, new QueueSelector(["q1", "q2"]), 10, processId)).rejects.toThrow(
      ProcessRowGoneError,
    );
    // The pruning put the first job's claim back in line (it never started: no attempt counted),
    // still holding its key's slot, so the second stays blocked: had the first been handed back
    // to run here as well, two runs of the key could overlap.
    expect(await firm.getJob(first)).toMatchObject({ state: "ready", attempts: 0 });
    expect((await firm.getJob(second))?.state).toBe("blocked");
    expect(await countRows(await env.db(), "firm_queue_claimed_executions")).toBe(0);
  });
});
