// High availability on PostgreSQL (docs/high-availability.md): a primary and a streaming replica
// of the test's own (test/support/postgres-pair.ts), real `firm-queue start` processes on a URL
// listing both servers with target_session_attrs=read-write, the primary SIGKILLed mid-run and
// the replica promoted. Runs when PostgreSQL is under test; without pg_basebackup it is skipped
// loudly, and with CI set it fails instead.
// FIRM_QUEUE_HA_RUNS=N repeats the synchronous failover N times (default 1) and runs N
// asynchronous ones too, printing the figures docs/high-availability.md quotes; FIRM_QUEUE_HA_SEED
// replays a run.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { createDashboard, type Duration, FirmQueue, ReadOnlyDatabaseError, silentLogger } from "../src/index.js";
import { describeFailover, runFailover, type FailoverReport } from "./support/failover-run.js";
import { PostgresPair } from "./support/postgres-pair.js";
import { testDialects } from "./support/test-database.js";

const RUNS = Math.max(1, Number(process.env.FIRM_QUEUE_HA_RUNS ?? "1") || 1);
const LONG = process.env.FIRM_QUEUE_HA_RUNS !== undefined;
const SEED = Number(process.env.FIRM_QUEUE_HA_SEED ?? Date.now() % 100_000);
/** The config's alive threshold: a process must heartbeat to the new primary well within it. */
const ALIVE_THRESHOLD_MS = 15_000;
/** The workers poll every 20 s: a job started sooner after the failover was announced by NOTIFY. */
const WORKER_POLLING_MS = 20_000;

const wanted = testDialects().includes("postgres");
const available = PostgresPair.available();
const ci = !["", "0", "false"].includes((process.env.CI ?? "").trim().toLowerCase());
if (wanted && !available) {
  if (ci)
    throw new Error("The PostgreSQL failover tests must run in CI, but pg_basebackup is missing (postgresql-15).");
  const bar = "!".repeat(78);
  console.warn(
    `\n${bar}\n!!! POSTGRESQL FAILOVER TESTS SKIPPED: pg_basebackup or the server binaries are missing.\n${bar}\n`,
  );
}

describe.skipIf(!wanted || !available)("PostgreSQL primary and streaming replica", () => {
  it(
    "synchronous replication: a SIGKILLed primary and a promoted replica lose no job, run none twice, break no limit, lose or double no tick",
    async () => {
      const reports: FailoverReport[] = [];
      for (let run = 0; run < RUNS; run++) {
        // Long runs also make the replica trail by 50 ms: commits wait for it, and still nothing is lost.
        const report = await runFailover("sync", SEED + run, LONG ? 600 : 200, LONG && run % 2 === 1 ? 50 : 0);
        console.log(describeFailover(report));
        reports.push(report);
        const kept = report.violations.length > 0 ? ` (run log kept at ${report.logFile})` : "";
        expect(report.violations, `${describeFailover(report)}${kept}`).toEqual([]);
        expect(report.lostEnqueues).toEqual([]);
        expect(report.rerunsWithoutCrash).toBe(0);
        expect(report.overLimit).toBe(0);
        expect(report.ticks).toMatchObject({ missing: 0, doubled: 0 });
        // The run did what it claims: work went on before and after the failover.
        expect(report.ticks.count).toBeGreaterThan(2);
        expect(report.jobs.acknowledged).toBeGreaterThan(0);
        // Reconnection bounds (docs/high-availability.md): heartbeats reach the new primary before
        // anyone could be pruned, claims and enqueues resume, and LISTEN was re-established.
        const { allHeartbeats, firstClaim, firstEnqueue, listenProbe } = report.timings;
        expect(allHeartbeats).not.toBeNull();
        expect(allHeartbeats!).toBeLessThan(ALIVE_THRESHOLD_MS);
        expect(firstClaim).not.toBeNull();
        expect(firstEnqueue).not.toBeNull();
        expect(listenProbe).not.toBeNull();
        expect(listenProbe!).toBeLessThan(WORKER_POLLING_MS / 2);
      }
      if (RUNS > 1) console.log(summarize(reports));
    },
    RUNS * 240_000,
  );

  it.runIf(LONG)(
    "asynchronous replication: what a failover loses, measured",
    async () => {
      // On loopback the replica is microseconds behind; through the relay it trails by 200 ms, as a
      // loaded replica or a distant one does.
      for (const lag of [0, 200]) {
        const reports: FailoverReport[] = [];
        for (let run = 0; run < RUNS; run++) {
          const report = await runFailover("async", SEED + 1000 + run, 600, lag);
          console.log(describeFailover(report));
          if (report.violations.length > 0) console.log(report.violations.slice(0, 10).join("\n"));
          reports.push(report);
        }
        console.log(summarize(reports));
        // Whatever was lost, every job the promoted server has ran: the queue goes on after a lossy failover.
        for (const report of reports)
          expect(report.violations.filter((line) => /never ran to the end|not finished/.test(line))).toEqual([]);
      }
    },
    2 * RUNS * 240_000,
  );

  describe("a read-only server", () => {
    let pair: PostgresPair;
    const DATABASE = "firm_ro";
    /** The replica streams through a relay that holds its WAL back this long: lag to see. */
    const LAG_MS = 200;
    beforeAll(async () => {
      pair = await PostgresPair.start("async", LAG_MS);
      await pair.sql(pair.primary, `CREATE DATABASE ${DATABASE}`);
      const migrator = new FirmQueue({ databaseUrl: pair.adminUrl(pair.primary, DATABASE), logger: silentLogger });
      await migrator.migrate();
      await migrator.close();
      await pair.waitUntilReplayed();
    }, 120_000);
    afterAll(() => pair?.stop());

    const open = (url: string) => {
      const firm = new FirmQueue({ databaseUrl: url, logger: silentLogger });
      firm.defineJob("noop", async () => {});
      return firm;
    };

    it("refuses to enqueue or start with ReadOnlyDatabaseError naming the server", async () => {
      const firm = open(pair.adminUrl(pair.replica, DATABASE));
      try {
        const enqueued = firm.enqueue("noop", {});
        await expect(enqueued).rejects.toBeInstanceOf(ReadOnlyDatabaseError);
        await expect(enqueued).rejects.toThrow(pair.replica.address);
        await expect(firm.start({ workers: [{ queues: "*", pollingInterval: "100ms" }] })).rejects.toBeInstanceOf(
          ReadOnlyDatabaseError,
        );
      } finally {
        await firm.close();
      }
    });

    it("with target_session_attrs=read-write, skips a standby listed first and refuses when only standbys answer", async () => {
      const both = open(
        `postgres://postgres@${pair.replica.address},${pair.primary.address}/${DATABASE}?target_session_attrs=read-write`,
      );
      const standbyOnly = open(
        `postgres://postgres@${pair.replica.address}/${DATABASE}?target_session_attrs=read-write`,
      );
      try {
        const { id } = await both.enqueue("noop", {});
        expect(id).toBeGreaterThan(0);
        await expect(standbyOnly.enqueue("noop", {})).rejects.toBeInstanceOf(ReadOnlyDatabaseError);
      } finally {
        await both.close();
        await standbyOnly.close();
      }
    });

    const reading = (readMaxLag: Duration = "30s") => {
      const firm = new FirmQueue({
        databaseUrl: pair.adminUrl(pair.primary, DATABASE),
        readUrl: pair.adminUrl(pair.replica, DATABASE),
        readMaxLag,
        logger: silentLogger,
      });
      firm.defineJob("noop", async () => {});
      return firm;
    };

    it("readUrl: firm.inspect and the dashboard read the streaming replica and show its lag; writes go to the primary", async () => {
      const firm = reading();
      try {
        await firm.queues.clear("default");
        const id = (await firm.enqueue("noop", {})).id!;
        await pair.waitUntilReplayed();
        const source = await firm.inspect.replication();
        expect(source).toMatchObject({
          readsFrom: "replica",
          reason: null,
          replica: { role: "standby", following: true },
        });
        // What the relay holds each message back by is the lag the replica reports.
        expect(source!.replica!.lagMs).toBeGreaterThanOrEqual(LAG_MS * 0.75);
        expect(source!.replica!.lagMs).toBeLessThan(5000);
        expect((await firm.inspect.job(id))?.state).toBe("ready");
        const page = await (
          await createDashboard({ firm, allowUnauthenticated: true }).fetch(new Request("http://localhost/"))
        ).text();
        expect(page).toMatch(/data-replication="replica"[^>]*>replica · lag 0\.\d s</);
      } finally {
        await firm.close();
      }
    });

    it("readUrl: a replica whose replay stands still is read until it trails by more than readMaxLag, then the primary", async () => {
      const patient = reading("1h");
      const strict = reading("1s");
      try {
        await pair.sql(pair.replica, "SELECT pg_wal_replay_pause()");
        const id = (await patient.enqueue("noop", {})).id!;
        // The write went to the primary; the replica has received it but not replayed it.
        expect((await patient.getJob(id))?.state).toBe("ready");
        expect(await patient.inspect.job(id)).toBeNull();
        // Past the two seconds one look at the replica stands for, so this is a new look.
        await sleep(2500);
        const stale = await patient.inspect.replication();
        expect(stale).toMatchObject({ readsFrom: "replica", replica: { role: "standby", following: true } });
        expect(stale!.replica!.lagMs).toBeGreaterThanOrEqual(1000);
        const fallback = await strict.inspect.replication();
        expect(fallback).toMatchObject({ readsFrom: "primary" });
        expect(fallback!.reason).toMatch(/the replica is \d+ ms behind, more than readMaxLag \(1000 ms\)/);
        expect((await strict.inspect.job(id))?.state).toBe("ready");
      } finally {
        await pair.sql(pair.replica, "SELECT pg_wal_replay_resume()");
        await patient.close();
        await strict.close();
      }
    });

    // Last: the replica does not come back.
    it("readUrl: a replica that died sends reads to the primary, saying why", async () => {
      const firm = reading();
      try {
        const id = (await firm.enqueue("noop", {})).id!;
        pair.kill(pair.replica);
        const source = await firm.inspect.replication();
        expect(source).toMatchObject({ readsFrom: "primary", replica: null });
        expect(source!.reason).toMatch(/the replica did not answer/);
        expect((await firm.inspect.job(id))?.state).toBe("ready");
      } finally {
        await firm.close();
      }
    });
  });
});

/** Totals over repeated runs, for docs/high-availability.md. */
function summarize(reports: readonly FailoverReport[]): string {
  const sum = (pick: (report: FailoverReport) => number) => reports.reduce((total, report) => total + pick(report), 0);
  const times = (pick: (report: FailoverReport) => number | null) => {
    const values = reports
      .map(pick)
      .filter((value): value is number => value !== null)
      .sort((a, b) => a - b);
    return values.length === 0
      ? "n/a"
      : `median ${values[Math.floor(values.length / 2)]} ms, max ${values[values.length - 1]} ms`;
  };
  return [
    `${reports.length} ${reports[0]?.mode} failovers (replica lag ${[...new Set(reports.map((r) => r.replicationLagMs))].join("/")} ms):`,
    `acknowledged ${sum((r) => r.jobs.initial + r.jobs.acknowledged)} jobs, lost ${sum((r) => r.lostEnqueues.length)} (in ${reports.filter((r) => r.lostEnqueues.length > 0).length} runs);`,
    `reruns without a crash ${sum((r) => r.rerunsWithoutCrash)}; over-limit ${sum((r) => r.overLimit)};`,
    `ticks ${sum((r) => r.ticks.count)}, missing ${sum((r) => r.ticks.missing)}, doubled ${sum((r) => r.ticks.doubled)};`,
    `kill→promoted ${times((r) => r.timings.killToPromoted)}; all heartbeats ${times((r) => r.timings.allHeartbeats)};`,
    `first claim ${times((r) => r.timings.firstClaim)}; first enqueue ${times((r) => r.timings.firstEnqueue)}; LISTEN probe ${times((r) => r.timings.listenProbe)}`,
  ].join(" ");
}
