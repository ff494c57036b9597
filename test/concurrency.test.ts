import { expect, it } from "vitest";
import { enqueueJobs } from "../src/lifecycle/enqueue.js";
import { dispatchContext } from "../src/lifecycle/dispatch-context.js";
import { releaseSemaphoreAndPromote } from "../src/lifecycle/semaphore-release.js";
import { resolveJobOptions } from "../src/definitions/job-definition.js";
import type { FirmQueue } from "../src/index.js";
import { countRows, describeEachDatabase, type TestEnv } from "./support/harness.js";
import { databaseNow } from "./support/database-clock.js";

type Args = { account: string; n?: number };

/** The semaphore row of a key, or undefined. */
async function semaphore(env: TestEnv, key: string) {
  const db = await env.db();
  const row = await db.selectFrom("firm_queue_semaphores").selectAll().where("key", "=", key).executeTakeFirst();
  return row && { value: row.value, expiresAt: new Date(row.expires_at) };
}

async function states(firm: FirmQueue, ids: readonly (number | null)[]): Promise<(string | undefined)[]> {
  return Promise.all(ids.map(async (id) => (id === null ? "discarded" : (await firm.getJob(id))?.state)));
}

describeEachDatabase("concurrency limits", (env) => {
  it("block a second job with the same key, not one with another key", async () => {
    const firm = env.firm();
    const sync = firm.defineJob("sync", async (_args: Args) => {}, {
      concurrency: { key: (args) => args.account, duration: "2m" },
    });
    const before = await databaseNow(firm);
    const a1 = (await sync.enqueue({ account: "A" })).id;
    const a2 = (await sync.enqueue({ account: "A" })).id;
    const b1 = (await sync.enqueue({ account: "B" })).id;
    expect(await states(firm, [a1, a2, b1])).toEqual(["ready", "blocked", "ready"]);
    expect(await firm.getJob(a2)).toMatchObject({ concurrencyKey: "sync/A" });
    expect(await semaphore(env, "sync/A")).toMatchObject({ value: 0 });
    expect(await semaphore(env, "sync/B")).toMatchObject({ value: 0 });
    const blocked = await (await env.db())
      .selectFrom("firm_queue_blocked_executions")
      .selectAll()
      .executeTakeFirstOrThrow();
    expect(blocked).toMatchObject({ job_id: a2, concurrency_key: "sync/A", queue_name: "default", priority: 0 });
    const expiresAt = new Date(blocked.expires_at).getTime();
    expect(expiresAt).toBeGreaterThanOrEqual(before + 120_000);
    expect(expiresAt).toBeLessThanOrEqual((await databaseNow(firm)) + 120_000);
  });

  it("let `to` jobs of one key run at once, never more", async () => {
    const firm = env.firm();
    let running = 0;
    let most = 0;
    const pair = firm.defineJob(
      "pair",
      async () => {
        most = Math.max(most, ++running);
        await new Promise((resolve) => setTimeout(resolve, 20));
        running--;
      },
      { concurrency: { key: "all", to: 2 } },
    );
    const ids = (await pair.enqueueAll([null, null, null, null, null])).map((result) => result.id);
    expect(await states(firm, ids)).toEqual(["ready", "ready", "blocked", "blocked", "blocked"]);
    expect(await firm.drain({ concurrency: 5 })).toBe(5);
    expect(most).toBe(2);
    expect(await semaphore(env, "pair/all")).toMatchObject({ value: 2 });
  });

  it("share slots between jobs of different names in one group", async () => {
    const firm = env.firm();
    const options = { concurrency: { key: (args: Args) => args.account, group: "accounts" } };
    const sync = firm.defineJob("sync", async (_args: Args) => {}, options);
    const bill = firm.defineJob("bill", async (_args: Args) => {}, options);
    const s1 = (await sync.enqueue({ account: "1" })).id;
    const b1 = (await bill.enqueue({ account: "1" })).id;
    const b2 = (await bill.enqueue({ account: "2" })).id;
    expect(await states(firm, [s1, b1, b2])).toEqual(["ready", "blocked", "ready"]);
    expect((await firm.getJob(b1))?.concurrencyKey).toBe("accounts/1");
    expect(await firm.drain()).toBe(3);
  });

  it("discard a job when its key is full: null, and nothing written", async () => {
    const firm = env.firm();
    const ping = firm.defineJob("ping", async (_args: Args) => {}, {
      concurrency: { key: (args) => args.account, onConflict: "discard" },
    });
    const first = (await ping.enqueue({ account: "A" })).id;
    expect(first).toEqual(expect.any(Number));
    expect((await ping.enqueue({ account: "A" })).id).toBeNull();
    expect((await firm.enqueue("ping", { account: "A" })).id).toBeNull();
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(1);
    expect(await countRows(await env.db(), "firm_queue_blocked_executions")).toBe(0);
    const mixed = (await ping.enqueueAll([{ account: "A" }, { account: "B" }, { account: "B" }, { account: "C" }])).map(
      (result) => result.id,
    );
    expect(mixed.map((id) => id === null)).toEqual([true, false, true, false]);
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(3);
    expect(await firm.drain()).toBe(3);
    // Slots free again: the next one is accepted.
    expect((await ping.enqueue({ account: "A" })).id).toEqual(expect.any(Number));
  });

  it("enqueueAll keeps input order across limited, unlimited, discarded and scheduled jobs", async () => {
    const firm = env.firm();
    const limited = firm.defineJob("limited", async (_args: Args) => {}, {
      concurrency: { key: (args) => args.account },
    });
    firm.defineJob("unlimited", async () => {});
    firm.defineJob("dropper", async () => {}, { concurrency: { key: "one", onConflict: "discard" } });
    const byLimited = (
      await limited.enqueueAll([
        { account: "A" },
        { account: "A" },
        { account: "B" },
        { account: "C" },
        { account: "B" },
      ])
    ).map((result) => result.id);
    expect(await states(firm, byLimited)).toEqual(["ready", "blocked", "ready", "ready", "blocked"]);
    // The internal path a producer of several job kinds (recurring tasks) uses: one transaction.
    const database = await firm.database();
    const request = (name: string, args: unknown, options?: { wait: number }) => ({
      name,
      args,
      defaults: resolveJobOptions(
        name,
        name === "unlimited"
          ? {}
          : name === "dropper"
            ? { concurrency: { key: "one", onConflict: "discard" } }
            : { concurrency: { key: (a: Args) => a.account } },
      ),
      ...(options ? { options } : {}),
    });
    const results = await enqueueJobs(database, (firm as any).policies, [
      request("dropper", null),
      request("limited", { account: "D" }),
      request("unlimited", null),
      request("dropper", null),
      request("limited", { account: "D" }),
      request("limited", { account: "D" }, { wait: 60_000 }),
      request("unlimited", null),
    ]);
    const ids = results.map((result) => result.id);
    expect(results.map((result) => result.status)).toEqual([
      "created",
      "created",
      "created",
      "dropped",
      "created",
      "created",
      "created",
    ]);
    expect(await states(firm, ids)).toEqual(["ready", "ready", "ready", "discarded", "blocked", "scheduled", "ready"]);
    const numbered = ids.filter((id): id is number => id !== null);
    expect([...numbered].sort((a, b) => a - b)).toEqual(numbered);
  });

  it("a finished job hands its slot to the next blocked job by priority, then job id", async () => {
    const firm = env.firm();
    const order: number[] = [];
    const sync = firm.defineJob("sync", async (args: Args) => void order.push(args.n!), {
      concurrency: { key: (args) => args.account },
    });
    await sync.enqueue({ account: "A", n: 0 }, { priority: 9 });
    await sync.enqueue({ account: "A", n: 1 }, { priority: 5 });
    await sync.enqueue({ account: "A", n: 2 }, { priority: 1 });
    await sync.enqueue({ account: "A", n: 3 }, { priority: 1 });
    await sync.enqueue({ account: "A", n: 4 }, { priority: 3 });
    const readyNow = await (await env.db()).selectFrom("firm_queue_ready_executions").select("job_id").execute();
    expect(readyNow).toHaveLength(1);
    expect(await firm.drain({ concurrency: 4 })).toBe(5);
    expect(order).toEqual([0, 2, 3, 4, 1]);
    expect(await countRows(await env.db(), "firm_queue_blocked_executions")).toBe(0);
    expect(await semaphore(env, "sync/A")).toMatchObject({ value: 1 });
  });

  it("a failed job gives its slot back too", async () => {
    const firm = env.firm();
    const ran: string[] = [];
    const sync = firm.defineJob(
      "sync",
      async (args: Args & { fail?: boolean }) => {
        ran.push(args.account + args.n);
        if (args.fail) throw new Error("boom");
      },
      { concurrency: { key: (args) => args.account } },
    );
    const failing = (await sync.enqueue({ account: "A", n: 1, fail: true })).id;
    const next = (await sync.enqueue({ account: "A", n: 2 })).id;
    expect((await firm.getJob(next))?.state).toBe("blocked");
    expect(await firm.drain()).toBe(2);
    expect(ran).toEqual(["A1", "A2"]);
    expect(await firm.getJob(failing)).toMatchObject({ state: "failed", attempts: 1 });
    expect(await firm.getJob(next)).toMatchObject({ state: "finished" });
    expect(await semaphore(env, "sync/A")).toMatchObject({ value: 1 });
  });

  it("renews the semaphore's expiry on every acquire and release", async () => {
    const firm = env.firm();
    const sync = firm.defineJob("sync", async () => {}, { concurrency: { key: "k", to: 2, duration: "1h" } });
    await sync.enqueue(null);
    const created = await semaphore(env, "sync/k");
    expect(created!.expiresAt.getTime()).toBeGreaterThan(Date.now() + 3_500_000);
    // Age the row, then acquire: the expiry moves forward again.
    const db = await env.db();
    const old = new Date(Date.now() - 1000);
    await db.updateTable("firm_queue_semaphores").set({ expires_at: old }).execute();
    await sync.enqueue(null);
    const acquired = await semaphore(env, "sync/k");
    expect(acquired).toMatchObject({ value: 0 });
    expect(acquired!.expiresAt.getTime()).toBeGreaterThan(Date.now() + 3_500_000);
    await db.updateTable("firm_queue_semaphores").set({ expires_at: old }).execute();
    expect(await firm.drain({ concurrency: 1 })).toBe(2);
    const released = await semaphore(env, "sync/k");
    expect(released).toMatchObject({ value: 2 });
    expect(released!.expiresAt.getTime()).toBeGreaterThan(Date.now() + 3_500_000);
  });

  it("checks a scheduled job when the dispatcher makes it due", async () => {
    const firm = env.firm();
    const sync = firm.defineJob("sync", async (_args: Args) => {}, { concurrency: { key: (args) => args.account } });
    const ping = firm.defineJob("ping", async (_args: Args) => {}, {
      concurrency: { key: (args) => args.account, onConflict: "discard" },
    });
    const now = (await sync.enqueue({ account: "A" })).id;
    const later = (await sync.enqueue({ account: "A" }, { wait: 100 })).id;
    const otherKey = (await sync.enqueue({ account: "B" }, { wait: 100 })).id;
    const pingNow = (await ping.enqueue({ account: "A" })).id;
    const pingLater = (await ping.enqueue({ account: "A" }, { wait: 100 })).id;
    expect(await states(firm, [now, later, otherKey, pingNow, pingLater])).toEqual([
      "ready",
      "scheduled",
      "scheduled",
      "ready",
      "scheduled",
    ]);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await firm.dispatch()).toBe(3);
    expect(await states(firm, [now, later, otherKey, pingNow])).toEqual(["ready", "blocked", "ready", "ready"]);
    // Discarded at dispatch: its row is gone.
    expect(await firm.getJob(pingLater!)).toBeNull();
    expect(await firm.drain()).toBe(4);
  });

  it("a claim put back in line keeps its slot, and blocked jobs stay blocked", async () => {
    const firm = env.firm();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const sync = firm.defineJob("sync", async () => gate, { concurrency: { key: "k" } });
    const first = (await sync.enqueue(null)).id;
    const second = (await sync.enqueue(null)).id;
    const supervisor = await firm.start({ workers: [{ pollingInterval: 10 }], shutdownTimeout: 50 });
    const deadline = Date.now() + 10_000;
    while ((await firm.getJob(first))?.state !== "claimed") {
      if (Date.now() > deadline) throw new Error("first job never claimed");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await supervisor.stop();
    release();
    expect(await states(firm, [first, second])).toEqual(["ready", "blocked"]);
    expect(await semaphore(env, "sync/k")).toMatchObject({ value: 0 });
    expect(await firm.drain()).toBe(2);
  });

  it("racing enqueuers that all create one key's semaphore take exactly `to` slots", async () => {
    // Separate instances: separate pools on PostgreSQL and MariaDB, so the enqueues really race.
    const firms = Array.from({ length: 8 }, () => env.firm());
    const jobs = firms.map((firm) =>
      firm.defineJob("race", async (_args: { round: number }) => {}, {
        concurrency: { key: (args) => args.round, to: 3 },
      }),
    );
    for (let round = 0; round < 5; round++) {
      // Each round is a new key: every enqueue finds no semaphore row and tries to create it.
      const ids = (await Promise.all(jobs.flatMap((job) => [job.enqueue({ round }), job.enqueue({ round })]))).map(
        (result) => result.id,
      );
      const seen = await states(firms[0]!, ids);
      expect(seen.filter((state) => state === "ready")).toHaveLength(3);
      expect(seen.filter((state) => state === "blocked")).toHaveLength(13);
      expect(await semaphore(env, `race/${round}`)).toMatchObject({ value: 0 });
    }
  });

  it("an enqueue racing a release never leaves its job blocked beside a free slot", async () => {
    const releaser = env.firm();
    const enqueuer = env.firm();
    const options = { concurrency: { key: "k" } };
    const holder = releaser.defineJob("sync", async () => {}, options);
    const late = enqueuer.defineJob("sync", async () => {}, options);
    const first = (await holder.enqueue(null)).id;
    const database = await releaser.database();
    let second!: Promise<number>;
    // The release stays uncommitted while the other enqueue runs as far as it can: it must
    // either wait and then take the slot, or block before the release looks for blocked jobs.
    await database.dialect.beginClaimTx(database.db, async (trx) => {
      await releaseSemaphoreAndPromote(
        trx,
        dispatchContext(database, (releaser as any).policies),
        { jobName: "sync", concurrencyKey: "sync/k" },
        new Date(),
      );
      second = late.enqueue(null).then((result) => result.id);
      await new Promise((resolve) => setTimeout(resolve, 300));
    });
    expect(await states(releaser, [first, await second])).toEqual(["ready", "ready"]);
    expect(await semaphore(env, "sync/k")).toMatchObject({ value: 0 });
  });

  it("a lowered `to` holds as soon as the new definition runs", async () => {
    const before = env.firm();
    const wide = before.defineJob("sync", async () => {}, { concurrency: { key: "k", to: 3 } });
    await wide.enqueueAll([null, null, null]);
    expect(await before.drain({ concurrency: 3 })).toBe(3);
    expect(await semaphore(env, "sync/k")).toMatchObject({ value: 3 });
    // A new deploy: the same job, one at a time.
    const after = env.firm();
    const narrow = after.defineJob("sync", async () => {}, { concurrency: { key: "k", to: 1 } });
    const ids = (await narrow.enqueueAll([null, null, null])).map((result) => result.id);
    expect(await states(after, ids)).toEqual(["ready", "blocked", "blocked"]);
    expect(await after.drain()).toBe(3);
    expect(await semaphore(env, "sync/k")).toMatchObject({ value: 1 });
  });
});
