import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { FirmQueue, silentLogger } from "../../src/index.js";
import type { Db } from "../../src/database/dialect.js";
import { KEY_LIMIT, PLAIN_JOB } from "../fixtures/chaos-jobs.js";
import { ChaosCluster } from "./chaos-cluster.js";
import { analyseChaosLog } from "./chaos-log.js";
import { Random } from "./chaos-settings.js";
import { enqueueJobs, planJobs } from "./chaos-workload.js";
import { FailoverEnqueuer } from "./failover-enqueuer.js";
import { jobsNeverRun, leftBehind, startCounts, tickGaps, unfinishedJobs } from "./failover-checks.js";
import { PostgresPair, type ReplicationMode } from "./postgres-pair.js";

export const HA_CONFIG = "test/fixtures/ha.config.ts";
const DATABASE = "firm_ha";
const SUPERVISORS = 2;

/** What one failover run did, found and measured. */
export interface FailoverReport {
  readonly mode: ReplicationMode;
  /** How far the replica trailed (a relay holding its stream back); 0 on plain loopback. */
  readonly replicationLagMs: number;
  readonly seed: number;
  readonly seconds: number;
  /** Jobs enqueued before the processes started, and acknowledged while they ran (through the failover). */
  readonly jobs: { readonly initial: number; readonly acknowledged: number; readonly failedEnqueues: number };
  /** Acknowledged jobs whose row the new primary does not have. */
  readonly lostEnqueues: number[];
  /** Jobs (of those the new primary has) whose run ended with success and that ran again, no process having died. */
  readonly rerunsWithoutCrash: number;
  readonly overLimit: number;
  /** Seconds with no tick between the first and the last, and ticks that ran more than once. */
  readonly ticks: { readonly count: number; readonly missing: number; readonly doubled: number };
  /** Milliseconds from the promotion. */
  readonly timings: {
    readonly killToPromoted: number;
    readonly firstClaim: number | null;
    readonly allHeartbeats: number | null;
    readonly firstEnqueue: number | null;
    /** From enqueueing a probe job on the new primary (workers poll every 20 s) to its start: LISTEN's reconnect. */
    readonly listenProbe: number | null;
  };
  /** Every other broken guarantee. */
  readonly violations: string[];
  readonly logFile: string;
}

/**
 * One failover: a primary and a streaming replica (`mode`), two `firm-queue start` supervisors
 * (2 workers, a dispatcher and a scheduler each) on a URL listing both servers with
 * target_session_attrs=read-write, and an application enqueueing all along. Mid-run the primary
 * is SIGKILLed with every backend, and after a pause the replica is promoted; nothing is
 * restarted. Then the run is drained and checked against the new primary.
 */
export async function runFailover(
  mode: ReplicationMode,
  seed: number,
  jobs: number,
  replicationLagMs = 0,
): Promise<FailoverReport> {
  const started = Date.now();
  const random = new Random(seed);
  const dir = mkdtempSync(join(tmpdir(), "firm-queue-failover-"));
  const logFile = join(dir, "runs.log");
  const pair = await PostgresPair.start(mode, replicationLagMs);
  const url = pair.failoverUrl(DATABASE);
  const cluster = new ChaosCluster(url, logFile, HA_CONFIG);
  const violations: string[] = [];
  let enqueuer: FailoverEnqueuer | undefined;
  let observer: FirmQueue | undefined;
  try {
    await pair.sql(pair.primary, `CREATE DATABASE ${DATABASE}`);
    const migrator = new FirmQueue({ databaseUrl: url, logger: silentLogger });
    await migrator.migrate();
    await migrator.close();
    const initial = await enqueueJobs(url, planJobs(random, jobs));
    for (let i = 0; i < SUPERVISORS; i++) await cluster.startSupervisor();
    enqueuer = new FailoverEnqueuer(url, random);
    // Let work (claims, finishes, ticks, enqueues) be in flight when the primary dies.
    await sleep(random.between(1500, 3000));
    cluster.note("fault kill-primary begin");
    const killedAt = Date.now();
    pair.killPrimary();
    // The time a person or Patroni takes to decide; meanwhile there is no primary at all.
    await sleep(random.between(300, 1500));
    await pair.promoteReplica();
    const promotedAt = Date.now();
    cluster.note("fault kill-primary end");
    const linesAtPromotion = cluster.lines().length;

    observer = new FirmQueue({ databaseUrl: pair.adminUrl(pair.replica, DATABASE), logger: silentLogger });
    const db = (await observer.database()).db;
    const [allHeartbeats, firstClaim, firstEnqueue] = await Promise.all([
      timeUntil(promotedAt, 30_000, () => heartbeatsSince(db, promotedAt)),
      timeUntil(promotedAt, 30_000, () =>
        cluster
          .lines()
          .slice(linesAtPromotion)
          .some((line) => line.startsWith("start ")),
      ),
      timeUntil(promotedAt, 30_000, () => enqueuer!.lastAcknowledgedAt > promotedAt),
    ]);
    await sleep(random.between(1000, 2000));
    await enqueuer.stop();

    const stuck = await waitUntilDrained(db, 120_000);
    if (stuck) violations.push(stuck);
    const probe = await enqueueJobs(pair.adminUrl(pair.replica, DATABASE), [
      { name: PLAIN_JOB, args: { key: null, ms: 0, failFirst: false }, options: { priority: 0, queue: "chaos-a" } },
    ]);
    const probedAt = Date.now();
    const listenProbe = await timeUntil(probedAt, 30_000, () =>
      cluster.lines().some((line) => line.startsWith(`start ${probe[0]} `)),
    );

    for (const { pid, finished } of await cluster.stop())
      if (finished.code !== 0)
        violations.push(`supervisor ${pid} exited with ${finished.code ?? finished.signal} on TERM`);
    for (const exit of cluster.unexpectedExits) violations.push(`supervisor ${exit.pid} exited on its own`);
    violations.push(...(await leftBehind(db, KEY_LIMIT)));

    const present = new Set(
      (await db.selectFrom("firm_queue_jobs").select("id").execute()).map((row) => Number(row.id)),
    );
    const lostEnqueues = [...initial, ...enqueuer.acknowledged].filter((id) => !present.has(id));
    const analysis = analyseChaosLog(cluster.lines(), KEY_LIMIT);
    const kinds = (kind: string) => analysis.violations.filter((violation) => violation.kind === kind);
    for (const violation of analysis.violations)
      if (violation.kind !== "rerun-after-success" && violation.kind !== "over-limit")
        violations.push(`${violation.kind} (run log line ${violation.line}): ${violation.detail}`);
    const neverRun = await jobsNeverRun(db, analysis.succeeded);
    if (neverRun) violations.push(neverRun);
    const ticks = await tickGaps(db, startCounts(cluster.lines()));
    return {
      mode,
      replicationLagMs,
      seed,
      seconds: Math.round((Date.now() - started) / 1000),
      jobs: {
        initial: initial.length,
        acknowledged: enqueuer.acknowledged.length,
        failedEnqueues: enqueuer.failedEnqueues,
      },
      lostEnqueues,
      rerunsWithoutCrash: kinds("rerun-after-success").length,
      overLimit: kinds("over-limit").length,
      ticks,
      timings: { killToPromoted: promotedAt - killedAt, firstClaim, allHeartbeats, firstEnqueue, listenProbe },
      violations,
      logFile,
    };
  } catch (error) {
    throw new Error(`${(error as Error).stack}\n--- output ---\n${cluster.output().split("\n").slice(-40).join("\n")}`);
  } finally {
    cluster.destroy();
    await enqueuer?.stop().catch(() => undefined);
    await observer?.close().catch(() => undefined);
    await pair.stop();
    if (violations.length === 0) rmSync(dir, { recursive: true, force: true });
  }
}

/** Every registered process has written a heartbeat to the new primary since its promotion. */
async function heartbeatsSince(db: Db, since: number): Promise<boolean> {
  const rows = await db.selectFrom("firm_queue_processes").select("last_heartbeat_at").execute();
  return rows.length > 0 && rows.every((row) => new Date(row.last_heartbeat_at as Date).getTime() > since);
}

/** Milliseconds from `from` until `check` holds, or null if it did not within `timeoutMs`. */
async function timeUntil(
  from: number,
  timeoutMs: number,
  check: () => boolean | Promise<boolean>,
): Promise<number | null> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return Date.now() - from;
    await sleep(50);
  }
  return null;
}

async function waitUntilDrained(db: Db, timeoutMs: number): Promise<string | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = await unfinishedJobs(db);
    if (left === 0) return null;
    if (Date.now() > deadline) return `${left} jobs not finished ${timeoutMs / 1000} s after the failover`;
    await sleep(250);
  }
}

/** The report as a line of figures. */
export function describeFailover(report: FailoverReport): string {
  const t = report.timings;
  return [
    `failover [${report.mode}, replica lag ${report.replicationLagMs} ms] seed=${report.seed} ${report.seconds}s:`,
    `jobs ${report.jobs.initial} + ${report.jobs.acknowledged} acknowledged (${report.jobs.failedEnqueues} enqueues refused during the failover);`,
    `lost enqueues ${report.lostEnqueues.length}, reruns without a crash ${report.rerunsWithoutCrash}, over-limit ${report.overLimit};`,
    `ticks ${report.ticks.count}, missing ${report.ticks.missing}, doubled ${report.ticks.doubled};`,
    `kill→promoted ${t.killToPromoted} ms; after promotion: first claim ${t.firstClaim} ms, all heartbeats ${t.allHeartbeats} ms, first enqueue ${t.firstEnqueue} ms; LISTEN probe ${t.listenProbe} ms;`,
    `violations ${report.violations.length}`,
  ].join(" ");
}
