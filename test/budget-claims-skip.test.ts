import { expect, it } from "vitest";
import { describeEachDatabase } from "./support/harness.js";
import { BudgetClaims } from "../src/roles/budget-claims.js";
import { registerProcess } from "../src/models/process.js";

/*
 * A worker that defines rate-limited jobs runs a budget claim transaction only when a budget may
 * have work: once a claim has found when the budgets open next, the claims before then are
 * skipped (beside a budget full for a minute, unlimited jobs would otherwise pay one empty claim
 * transaction per poll), and a budget that becomes due sooner shows at the next outlook read.
 */
describeEachDatabase("budget claims skipped until the next opening", (env) => {
  it("skips the claim while the only budget is full, and claims again once another has a job due", async () => {
    const firm = env.firm();
    const minute = firm.defineJob("per-minute", async () => {}, { rateLimit: { limit: 1, period: "1m" } });
    const other = firm.defineJob("other", async () => {}, { rateLimit: { limit: 5, period: "1s" } });
    await minute.enqueueAll([null, null]);
    const database = await firm.database();
    const processId = await registerProcess(database.db, { kind: "Worker", name: "w" }, database.clock.now());
    const budgets = new BudgetClaims(database, 0, true);
    const scope = { all: true } as const;
    expect(budgets.mayHaveWork(scope)).toBe(true);
    await budgets.refresh();
    expect(await budgets.claim(scope, 10, processId)).toHaveLength(1);
    // The budget is full for a minute, and no other has a job: nothing to claim before then.
    expect(budgets.mayHaveWork(scope)).toBe(false);
    await other.enqueue(null);
    await budgets.refresh();
    expect(budgets.mayHaveWork(scope)).toBe(true);
    expect(await budgets.claim(scope, 10, processId)).toHaveLength(1);
  });
});
