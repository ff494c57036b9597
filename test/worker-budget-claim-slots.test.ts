import { afterEach, expect, it, vi } from "vitest";
import { describeEachDatabase, waitFor } from "./support/harness.js";
import { BudgetClaims } from "../src/roles/budget-claims.js";

/*
 * While a budget has room, a worker keeps its freed slots for the next budget claim instead of
 * starting buffered jobs in them. Once that claim is under way it holds the slots it asked for;
 * a slot freed meanwhile goes to a buffered job (kept for the claim, it stayed idle until the
 * claim returned: tens of ms per claim on a loaded machine).
 */
describeEachDatabase("a worker during a budget claim", (env) => {
  afterEach(() => vi.restoreAllMocks());

  it("starts a buffered job in a slot freed while the budget claim runs", async () => {
    let openClaim!: () => void;
    const claimGate = new Promise<void>((resolve) => (openClaim = resolve));
    let claimWaiting!: () => void;
    const claimUnderWay = new Promise<void>((resolve) => (claimWaiting = resolve));
    let calls = 0;
    // A budget with room throughout; its second claim waits for the test.
    vi.spyOn(BudgetClaims.prototype, "dueNow").mockReturnValue(true);
    vi.spyOn(BudgetClaims.prototype, "claim").mockImplementation(async () => {
      if (++calls === 2) {
        claimWaiting();
        await claimGate;
      }
      return [];
    });
    const firm = env.firm();
    const started: string[] = [];
    let openFirst!: () => void;
    const firstGate = new Promise<void>((resolve) => (openFirst = resolve));
    const job = firm.defineJob("step", async (args: { name: string }) => {
      started.push(args.name);
      if (args.name === "first") await firstGate;
    });
    // Two slots: "first" and "second" start at the first claim, "third" waits in the buffer; the
    // slot "second" frees is kept for the budget, whose claim then waits.
    await job.enqueueAll([{ name: "first" }, { name: "second" }, { name: "third" }]);
    const supervisor = await firm.start({
      workers: [{ queues: "*", concurrency: 2, pollingInterval: 20 }],
      dispatchers: [],
    });
    try {
      await claimUnderWay;
      expect(started).toEqual(["first", "second"]);
      openFirst();
      await waitFor(() => started.length === 3, 10_000, "the buffered job to start while the budget claim runs");
      expect(started).toEqual(["first", "second", "third"]);
    } finally {
      openFirst();
      openClaim();
      await supervisor.stop();
    }
  });
});
