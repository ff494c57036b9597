import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { FirmQueue, silentLogger } from "../../src/index.js";
import { KEY_LIMIT } from "../fixtures/chaos-jobs.js";
import { ChaosCluster } from "./chaos-cluster.js";
import { analyseChaosLog } from "./chaos-log.js";
import { Random } from "./chaos-settings.js";
import { enqueueJobs, planJobs } from "./chaos-workload.js";
import { jobsNeverRun, leftBehind, startCounts, tickGaps, unfinishedJobs } from "./failover-checks.js";
import type { GaleraCluster, GaleraNode } from "./galera-cluster.js";

const CONFIG = "test/fixtures/galera.config.ts";
const DATABASE = "firm_galera";

/** What one Galera run did and found. */
export interface GaleraReport {
  readonly seed: number;
  readonly seconds: number;
  readonly jobs: number;
  readonly nodeKills: number;
  /** Milliseconds from starting a killed node again to it being Synced, per kill. */
  readonly rejoinMs: number[];
  readonly runs: { starts: number; ends: number; reruns: number };
  readonly ticks: { readonly count: number; readonly missing: number; readonly doubled: number };
  /**
   * Over all nodes, during the run: transactions aborted at commit by certification
   * (wsrep_local_cert_failures) and by a replicated write set (wsrep_local_bf_aborts), which
   * firm-queue saw as ER_LOCK_DEADLOCK and retried.
   */
  readonly conflicts: { readonly certFailures: number; readonly bfAborts: number };
  /** Every broken guarantee: lost, doubled, over-limit, stuck, left behind. */
  readonly violations: string[];
  readonly logFile: string;
}

/**
 * Writes on every node: one `firm-queue start` supervisor (2 workers, a dispatcher, a scheduler)
 * per node of a three-node cluster, each on its own node's URL, working through the chaos mix
 * (plain and keyed jobs, limit 1 per key) with jobs enqueued on every node. With `kills` > 0, a
 * node (never the same twice in a row) is SIGKILLed that many times mid-run and started again;
 * its processes wait for it and go on. Then the run is drained and checked.
 */
export async function runGalera(
  cluster: GaleraCluster,
  seed: number,
  jobs: number,
  kills: number,
): Promise<GaleraReport> {
  const started = Date.now();
  const random = new Random(seed);
  const dir = mkdtempSync(join(tmpdir(), "firm-queue-galera-run-"));
  const logFile = join(dir, "runs.log");
  const database = `${DATABASE}_${seed}`;
  const url = (node: GaleraNode) => cluster.url(node, database);
  const supervisors = cluster.nodes.map((node) => new ChaosCluster(url(node), logFile, CONFIG));
  const violations: string[] = [];
  const rejoinMs: number[] = [];
  let observer: FirmQueue | undefined;
  try {
    await cluster.sql(cluster.nodes[0]!, `CREATE DATABASE ${database}`);
    const before = await conflictCounts(cluster);
    const migrator = new FirmQueue({ databaseUrl: url(cluster.nodes[0]!), logger: silentLogger });
    await migrator.migrate();
    await migrator.close();
    const third = Math.ceil(jobs / 3);
    const ids: number[] = [];
    // Enqueued on every node: inserts certified against each other too.
    const enqueueOn = async (node: GaleraNode, count: number) =>
      ids.push(...(await enqueueJobs(url(node), planJobs(random, count))));
    await Promise.all(cluster.nodes.map((node) => enqueueOn(node, third)));
    for (const supervisor of supervisors) await supervisor.startSupervisor();
    let last: GaleraNode | undefined;
    for (let kill = 0; kill < kills; kill++) {
      await sleep(random.between(1000, 3000));
      const node = random.pick(cluster.nodes.filter((candidate) => candidate !== last));
      last = node;
      supervisors[0]!.note(`fault kill-node ${node.index} begin`);
      cluster.kill(node);
      // More work arrives on the nodes that are up while one is away.
      const others = cluster.nodes.filter((other) => other !== node);
      await enqueueOn(random.pick(others), 30);
      await sleep(random.between(500, 2000));
      const restarting = Date.now();
      await cluster.rejoin(node);
      rejoinMs.push(Date.now() - restarting);
      supervisors[0]!.note(`fault kill-node ${node.index} end`);
    }
    await sleep(1000);
    observer = new FirmQueue({ databaseUrl: url(cluster.nodes[0]!), logger: silentLogger });
    const db = (await observer.database()).db;
    const deadline = Date.now() + 180_000;
    for (let left = await unfinishedJobs(db); left > 0; left = await unfinishedJobs(db)) {
      if (Date.now() > deadline) {
        violations.push(`${left} jobs not finished 180 s after the last fault`);
        break;
      }
      await sleep(250);
    }
    const after = await conflictCounts(cluster);
    for (const supervisor of supervisors)
      for (const { pid, finished } of await supervisor.stop())
        if (finished.code !== 0)
          violations.push(`supervisor ${pid} exited with ${finished.code ?? finished.signal} on TERM`);
    for (const supervisor of supervisors)
      for (const exit of supervisor.unexpectedExits) violations.push(`supervisor ${exit.pid} exited on its own`);
    violations.push(...(await leftBehind(db, KEY_LIMIT)));
    const lines = supervisors[0]!.lines();
    const analysis = analyseChaosLog(lines, KEY_LIMIT);
    for (const violation of analysis.violations.slice(0, 25))
      violations.push(`${violation.kind} (run log line ${violation.line}): ${violation.detail}`);
    const present = (await db.selectFrom("firm_queue_jobs").select("id").execute()).map((row) => Number(row.id));
    const missing = ids.filter((id) => !present.includes(id));
    if (missing.length > 0)
      violations.push(`${missing.length} acknowledged jobs missing: ${missing.slice(0, 10).join(", ")}`);
    const neverRun = await jobsNeverRun(db, analysis.succeeded);
    if (neverRun) violations.push(neverRun);
    const ticks = await tickGaps(db, startCounts(lines));
    if (ticks.missing > 0 || ticks.doubled > 0)
      violations.push(`ticks: ${ticks.missing} seconds without a tick, ${ticks.doubled} doubled`);
    return {
      seed,
      seconds: Math.round((Date.now() - started) / 1000),
      jobs: ids.length,
      nodeKills: kills,
      rejoinMs,
      runs: { starts: analysis.counts.starts, ends: analysis.counts.ends, reruns: analysis.counts.reruns },
      ticks,
      conflicts: { certFailures: after.certFailures - before.certFailures, bfAborts: after.bfAborts - before.bfAborts },
      violations,
      logFile,
    };
  } catch (error) {
    throw new Error(
      `${(error as Error).stack}\n--- output ---\n${supervisors
        .map((s) => s.output())
        .join("\n")
        .split("\n")
        .slice(-40)
        .join("\n")}`,
    );
  } finally {
    for (const supervisor of supervisors) supervisor.destroy();
    await observer?.close().catch(() => undefined);
    if (violations.length === 0) rmSync(dir, { recursive: true, force: true });
  }
}

/** The report as a line of figures. */
export function describeGalera(report: GaleraReport): string {
  return [
    `galera seed=${report.seed} ${report.seconds}s: ${report.jobs} jobs on 3 nodes, ${report.nodeKills} node kills`,
    `(rejoined in ${report.rejoinMs.join(", ") || "-"} ms);`,
    `runs ${report.runs.starts} started, ${report.runs.ends} succeeded, ${report.runs.reruns} reruns;`,
    `certification conflicts ${report.conflicts.certFailures} + ${report.conflicts.bfAborts} brute-force aborts, retried;`,
    `ticks ${report.ticks.count} (missing ${report.ticks.missing}, doubled ${report.ticks.doubled});`,
    `violations ${report.violations.length}`,
  ].join(" ");
}

/** Certification failures and brute-force aborts summed over the nodes (counters since each node started). */
async function conflictCounts(cluster: GaleraCluster): Promise<{ certFailures: number; bfAborts: number }> {
  let certFailures = 0;
  let bfAborts = 0;
  for (const node of cluster.nodes) {
    const rows = await cluster.sql<{ Variable_name: string; Value: string }>(
      node,
      "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_cert_failures', 'wsrep_local_bf_aborts')",
    );
    for (const row of rows) {
      if (row.Variable_name === "wsrep_local_cert_failures") certFailures += Number(row.Value);
      else bfAborts += Number(row.Value);
    }
  }
  return { certFailures, bfAborts };
}
