import { describe, expect, it } from "vitest";
import type { Db } from "../src/database/dialect.js";
import { QueueSelector } from "../src/roles/queue-selector.js";

/** A database handle any use of which fails the test: the selector must not need one. */
const untouchable = new Proxy({} as Db, {
  get(_target, property) {
    throw new Error(`the selector used the database (${String(property)})`);
  },
});

// Which queues a worker claims from, poll by poll. Pauses are left to the claims themselves
// (claim-statement-guards and claiming test that paused queues are passed over); a selector of
// exact names must not cost a query before every claim, which an idle worker woken for one job
// would wait for.
describe("QueueSelector", () => {
  it("resolves exact names and '*' without reading the database, the same targets every poll", async () => {
    const all = new QueueSelector("*");
    expect(await all.targets(untouchable)).toEqual([{ exclude: [] }]);
    const named = new QueueSelector("mail, reports,mail");
    expect(await named.targets(untouchable)).toEqual([
      { queue: "mail", exclude: [] },
      { queue: "reports", exclude: [] },
    ]);
    expect(await named.targets(untouchable)).toBe(await named.targets(untouchable));
    expect(await new QueueSelector(["urgent", "*", "ignored"]).targets(untouchable)).toEqual([
      { queue: "urgent", exclude: [] },
      { exclude: ["urgent"] },
    ]);
    // A prefix after "*" can add nothing: it is not looked up.
    expect(await new QueueSelector(["urgent", "*", "mail-*"]).targets(untouchable)).toEqual([
      { queue: "urgent", exclude: [] },
      { exclude: ["urgent"] },
    ]);
  });

  it("asks the database for a prefix's queues at each poll (claiming.test.ts runs prefixes for real)", async () => {
    await expect(new QueueSelector(["urgent", "mail-*"]).targets(untouchable)).rejects.toThrow(
      "the selector used the database",
    );
  });
});
