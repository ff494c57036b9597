import type { FirmQueue } from "../../src/index.js";
import type { TestEnv } from "./harness.js";

/**
 * The time on `firm`'s database clock, the one scheduled times, expiries and finish times are
 * written and compared with: this host's clock plus the offset measured to the server. Even on
 * loopback the offset is a millisecond or so, so a bound taken with `Date.now()` can miss an exact
 * time by that much, and a time set with it can still be in the database's future.
 */
export async function databaseNow(firm: FirmQueue): Promise<number> {
  return (await firm.database()).clock.now().getTime();
}

/** Make every scheduled job due now (on the database's clock) and dispatch it. */
export async function fastForward(env: TestEnv, firm: FirmQueue): Promise<void> {
  await (await env.db())
    .updateTable("firm_queue_scheduled_executions")
    .set({ scheduled_at: new Date((await databaseNow(firm)) - 1) })
    .execute();
  await firm.dispatch();
}
