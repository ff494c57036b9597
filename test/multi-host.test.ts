// Many hosts on one database: three network namespaces each run `firm-queue start` against one
// PostgreSQL or MariaDB server reached through a bridge. One host is cut off (its link set down:
// packets dropped, no reset) while it runs jobs. Needs Linux and root; skipped loudly elsewhere,
// never skipped in CI. FIRM_QUEUE_MULTI_HOST_LONG=1 runs the longer variant (fork mode, more jobs).

import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DISPATCHER_POOL_SIZE, SUPERVISOR_POOL_SIZE, workerPoolSize } from "../src/supervisor/connection-budget.js";
import { writeFileSync } from "node:fs";
import { testDialects } from "./support/test-database.js";
import { countRows, waitFor } from "./support/harness.js";
import {
  multiHostUnavailableReason,
  startCluster,
  type Cluster,
  type HostProcess,
  type ServerDialect,
} from "./support/multi-host.js";
import { ClaimWatch, hostProcessIds } from "./support/claim-watch.js";

const LONG = process.env.FIRM_QUEUE_MULTI_HOST_LONG === "1";
const dialects = testDialects().filter((dialect): dialect is ServerDialect => dialect !== "sqlite");
const unavailable = multiHostUnavailableReason();
const ci = !["", "0", "false"].includes((process.env.CI ?? "").trim().toLowerCase());

if (unavailable && dialects.length > 0) {
  if (ci)
    throw new Error(
      `The multi-host tests must run in CI, but ${unavailable}. .ci/run installs iproute2 and runs as root.`,
    );
  const bar = "!".repeat(78);
  console.warn(
    `\n${bar}\n!!! MULTI-HOST TESTS SKIPPED: ${unavailable}.\n!!! Run the suite as root on Linux with iproute2 installed to test partitions.\n${bar}\n`,
  );
}

/** Timings short enough for CI, long enough for a loaded 2-core machine. */
const HEARTBEAT = "1s";
const ALIVE_THRESHOLD_MS = 8000;
const QUERY_TIMEOUT = "3s";
const hostArgs = (concurrency: number, heartbeat = HEARTBEAT) => [
  "--mode",
  LONG ? "fork" : "async",
  "--concurrency",
  String(concurrency),
  "--polling-interval",
  "100ms",
  "--process-heartbeat-interval",
  heartbeat,
  "--process-alive-threshold",
  `${ALIVE_THRESHOLD_MS}ms`,
  "--shutdown-timeout",
  "2s",
];
const hostEnv = { MULTI_HOST_QUERY_TIMEOUT: QUERY_TIMEOUT };

// The databases side by side (each cluster has its own namespaces, bridge, subnet and server; its
// tests wait on alive thresholds and cut links), each one's tests in turn.
for (const dialect of dialects.length > 0 ? dialects : (["postgres"] as const)) {
  describe.skipIf(unavailable !== null || dialects.length === 0)(
    `many hosts on one database [${dialect}]`,
    { concurrent: true },
    () => {
      describe("one test at a time", { sequential: true }, () => manyHostsOnOneDatabase(dialect));
    },
  );
}

function manyHostsOnOneDatabase(dialect: ServerDialect): void {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster(dialect, 3);
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it(
    "a cut-off host is pruned, its jobs are retried elsewhere, its late finishes are refused, and it stops claiming",
    async () => {
      const db = await cluster.db();
      const release = `${cluster.jobLog}.release`;
      const held = LONG ? 8 : 4;
      const hosts: HostProcess[] = [];
      const watch = new ClaimWatch(db, { limitedJob: "limited", limit: 2 });
      try {
        // Host 1 alone first, so it holds jobs that only end when the test says so.
        // Free slots beyond the held jobs: a host that ignored its pruning would claim new work with
        // them. Its heartbeat is slower than its polling, as with the defaults (60 s against 100 ms),
        // so after the partition it polls before its heartbeat can tell it that it was pruned.
        const first = cluster.startHost(0, hostArgs(held + 6, "4s"), hostEnv);
        hosts.push(first);
        await started(first);
        const heldIds = [
          ...(await Promise.all(
            [...Array(held)].map(() => cluster.firm.enqueue("work", { ms: 0, holdUntil: release })),
          )),
          ...(await Promise.all([0, 1].map(() => cluster.firm.enqueue("limited", { ms: 0, holdUntil: release })))),
        ].map((result) => result.id) as number[];
        const firstIds = await hostProcessIds(db, first.child.pid!);
        await waitFor(
          async () => (await watch.claimsOf(firstIds)) === heldIds.length,
          30_000,
          "host 1 claimed every held job",
        );

        for (const index of [1, 2]) hosts.push(cluster.startHost(index, hostArgs(4), hostEnv));
        await Promise.all(hosts.slice(1).map(started));
        const busy = [
          ...(await Promise.all([...Array(LONG ? 40 : 16)].map(() => cluster.firm.enqueue("work", { ms: 300 })))),
          ...(await Promise.all([...Array(4)].map(() => cluster.firm.enqueue("limited", { ms: 300 })))),
        ].map((result) => result.id);

        watch.start(firstIds);
        const beats = await db
          .selectFrom("firm_queue_processes")
          .select("last_heartbeat_at")
          .where("id", "in", firstIds)
          .execute();
        const lastBeat = Math.max(...beats.map((row) => new Date(row.last_heartbeat_at).getTime()));
        first.network.cut();
        // It notices: a statement on the silent connection times out well inside the threshold.
        await first.waitForOutput(/DatabaseTimeoutError/, ALIVE_THRESHOLD_MS);
        // The others prune it (its rows go) and retry its jobs per their policy.
        // Every row of it, not just its supervisor's: in fork mode the rows go one by one, and a
        // child's row (with its claims) can outlast the supervisor's by a pruning pass or more.
        await waitFor(
          async () =>
            (await db.selectFrom("firm_queue_processes").select("id").where("id", "in", firstIds).execute()).length ===
            0,
          ALIVE_THRESHOLD_MS * 4,
          "host 1 pruned",
        );
        watch.markPruned();
        // Not before the alive threshold had passed since its last heartbeat.
        expect(Date.now() - lastBeat).toBeGreaterThanOrEqual(ALIVE_THRESHOLD_MS);
        await waitFor(
          async () => (await unfinished(cluster, [...heldIds, ...busy])) === 0,
          60_000,
          "held and busy jobs finished on hosts 2 and 3",
        );

        // The network comes back with new work waiting: a host that ignored its pruning would claim it.
        const wave = [
          ...(await Promise.all([...Array(12)].map(() => cluster.firm.enqueue("work", { ms: 50 })))).map(
            (result) => result.id,
          ),
          (await cluster.firm.enqueue("limited", { ms: 50 })).id,
        ];
        first.network.restore();
        writeFileSync(release, "");
        // Its handlers end now, on a working network: every outcome is refused by the stale-worker guard.
        await waitFor(
          () => countMatches(first.output(), /claim was taken from this process/g) >= heldIds.length,
          30_000,
          "host 1's late finishes refused",
        );
        // It notices it was pruned and exits (a process manager would start it again).
        await first.waitForOutput(/row is gone/, 30_000);
        expect(await withTimeout(first.exited, 30_000)).toBe(0);
        await waitFor(
          async () => (await unfinished(cluster, wave)) === 0,
          60_000,
          "the wave after the partition finished",
        );

        const all = [...heldIds, ...busy, ...wave];
        expect(await unfinished(cluster, all)).toBe(0);
        expect(await countRows(db, "firm_queue_failed_executions")).toBe(0);
        expect(await countRows(db, "firm_queue_claimed_executions")).toBe(0);
        expect(await countRows(db, "firm_queue_blocked_executions")).toBe(0);
        expect(await countRows(db, "firm_queue_ready_executions")).toBe(0);
        // The held jobs' first attempts were counted as failed by the process's loss, and the retries
        // elsewhere finished them, with one error whatever the timing: the pruner fails the claims
        // it can lock, and keeps the row while the cut-off host's unfinished transaction still
        // locks some, failing those at a later pass (never the orphan sweep's ProcessMissingError).
        const heldRows = await db
          .selectFrom("firm_queue_jobs")
          .select(["id", "attempts", "last_error"])
          .where("id", "in", heldIds)
          .execute();
        for (const row of heldRows) {
          expect(row.attempts, `job ${row.id}: the pruned attempt and the retry`).toBeGreaterThanOrEqual(2);
          expect(row.last_error ?? "", `job ${row.id}`).toMatch(/ProcessPrunedError/);
        }
        const events = cluster.jobEvents();
        for (const id of heldIds) {
          const ends = events.filter((event) => event.jobId === id && event.event === "end");
          expect(
            ends.some((event) => event.host !== "host1"),
            `job ${id} ran to its end on another host`,
          ).toBe(true);
        }
        expect(watch.violations(), "claims held without a live process row, or the limit passed").toEqual([]);
        for (const host of hosts.slice(1)) expect(await host.stop()).toBe(0);
      } finally {
        await watch.stop();
        for (const host of hosts) await host.stop("SIGKILL");
        for (const host of cluster.network.hosts) host.restore();
      }
    },
    LONG ? 300_000 : 150_000,
  );

  it("a host whose connection goes silent notices within the alive threshold and carries on once it is back", async () => {
    const db = await cluster.db();
    const release = `${cluster.jobLog}.release-silent`;
    const host = cluster.startHost(1, [...hostArgs(2), "--process-alive-threshold", "20s"], {
      ...hostEnv,
      FIRM_QUEUE_LOG_LEVEL: process.env.FIRM_QUEUE_MULTI_HOST_LOG_LEVEL ?? "info",
    });
    try {
      await started(host);
      const ids = (
        await Promise.all([0, 1].map(() => cluster.firm.enqueue("work", { ms: 0, holdUntil: release })))
      ).map((result) => result.id) as number[];
      const hostIds = await hostProcessIds(db, host.child.pid!);
      await waitFor(
        async () =>
          (
            await db
              .selectFrom("firm_queue_claimed_executions")
              .select("job_id")
              .where("process_id", "in", hostIds)
              .execute()
          ).length === 2,
        30_000,
        "claimed",
      );
      const before = countMatches(host.output(), /DatabaseTimeoutError/g);
      host.network.cut();
      const cutAt = Date.now();
      // Without query timeouts, its heartbeat and polls would wait on the dead connections for the
      // kernel's retransmission limit (about 15 minutes) and it would log nothing at all.
      await waitFor(
        () => countMatches(host.output(), /DatabaseTimeoutError/g) > before,
        20_000,
        "a DatabaseTimeoutError logged while cut off",
      );
      const noticedAfter = Date.now() - cutAt;
      expect(noticedAfter).toBeLessThan(20_000);
      host.network.restore();
      writeFileSync(release, "");
      // Fresh connections: its jobs finish normally, recorded by this same host.
      await waitFor(
        async () => (await unfinished(cluster, ids)) === 0,
        30_000,
        "its jobs finished after the network came back",
      );
      // One attempt each (the one that just succeeded), none failed.
      const rows = await db
        .selectFrom("firm_queue_jobs")
        .select(["attempts", "last_error"])
        .where("id", "in", ids)
        .execute();
      expect(rows.map((row) => [row.attempts, row.last_error])).toEqual([
        [1, null],
        [1, null],
      ]);
      expect((await hostProcessIds(db, host.child.pid!)).length).toBeGreaterThanOrEqual(2);
      expect(await host.stop()).toBe(0);
    } finally {
      await host.stop("SIGKILL");
      host.network.restore();
    }
  }, 120_000);
  it("three hosts share a backlog: every job runs once, on every host, within each host's connection budget", async () => {
    const concurrency = 4;
    // Each host holds at most its slots and as many again claimed ahead, so a 150-job backlog
    // reaches all three. With the default prefetch (20 × concurrency) one claim may take 84 jobs,
    // and two hosts took the whole backlog between them in a CI run on MariaDB.
    const args = [...hostArgs(concurrency), "--prefetch", String(concurrency)];
    const hosts = [0, 1, 2].map((index) => cluster.startHost(index, args, hostEnv));
    try {
      await Promise.all(hosts.map(started));
      const ids: (number | null)[] = [];
      for (let batch = 0; batch < 6; batch++) {
        ids.push(
          ...(await Promise.all([...Array(25)].map(() => cluster.firm.enqueue("work", { ms: 20 })))).map(
            (result) => result.id,
          ),
        );
      }
      // One process per host in async mode: supervisor, worker and dispatcher share one pool, plus
      // the LISTEN connection on PostgreSQL (src/supervisor/connection-budget.ts).
      const budget =
        SUPERVISOR_POOL_SIZE + workerPoolSize(concurrency) + DISPATCHER_POOL_SIZE + (dialect === "postgres" ? 1 : 0);
      const most = new Map<string, number>();
      const deadline = Date.now() + 90_000;
      while ((await unfinished(cluster, ids)) > 0) {
        if (Date.now() > deadline) throw new Error("the backlog did not finish on three hosts within 90 s");
        for (const host of hosts) {
          const open = await connectionsFrom(cluster, host.network.address);
          most.set(host.name, Math.max(most.get(host.name) ?? 0, open));
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const ends = cluster.jobEvents().filter((event) => event.event === "end" && ids.includes(event.jobId));
      const runsPerJob = new Map<number, number>();
      for (const event of ends) runsPerJob.set(event.jobId, (runsPerJob.get(event.jobId) ?? 0) + 1);
      expect([...runsPerJob.values()].every((runs) => runs === 1)).toBe(true);
      expect(runsPerJob.size).toBe(ids.length);
      expect(new Set(ends.map((event) => event.host)).size, "every host ran some of the backlog").toBe(3);
      for (const host of hosts) {
        expect(most.get(host.name) ?? 0, `${host.name}: connections seen`).toBeGreaterThan(0);
        expect(most.get(host.name) ?? 0, `${host.name}: at most its budget of ${budget}`).toBeLessThanOrEqual(budget);
      }
      for (const host of hosts) expect(await host.stop()).toBe(0);
    } finally {
      for (const host of hosts) await host.stop("SIGKILL");
    }
  }, 150_000);
}

/**
 * Wait until every process of the host is up (the supervisor logs it once its roles have
 * registered): a fork-mode child still starting when the network is cut fails its start, and
 * with it the whole host, which is not what these tests are about.
 */
async function started(host: HostProcess): Promise<void> {
  await host.waitForOutput(/supervisor started/, 60_000);
}

async function unfinished(cluster: Cluster, ids: readonly (number | null)[]): Promise<number> {
  const db = await cluster.db();
  const rows = await db
    .selectFrom("firm_queue_jobs")
    .select("id")
    .where("id", "in", ids as number[])
    .where("finished_at", "is", null)
    .execute();
  return rows.length;
}

function countMatches(text: string, pattern: RegExp): number {
  return [...text.matchAll(pattern)].length;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | "timed out"> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<"timed out">((resolve) => (timer = setTimeout(() => resolve("timed out"), ms))),
  ]).finally(() => clearTimeout(timer));
}

/** Connections the database server has open from `address` now. */
async function connectionsFrom(cluster: Cluster, address: string): Promise<number> {
  const db = await cluster.db();
  const query =
    cluster.dialect === "postgres"
      ? sql<{
          open: number | string;
        }>`SELECT COUNT(*) AS open FROM pg_stat_activity WHERE client_addr = ${address}::inet`
      : sql<{
          open: number | string;
        }>`SELECT COUNT(*) AS open FROM information_schema.processlist WHERE host LIKE ${`${address}:%`}`;
  const { rows } = await query.execute(db);
  return Number(rows[0]?.open ?? 0);
}
