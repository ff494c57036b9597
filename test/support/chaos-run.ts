import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { FirmQueue, silentLogger } from "../../src/index.js";
import { KEY_LIMIT, RATE_LIMIT, RATE_PERIOD_MS } from "../fixtures/chaos-jobs.js";
import {
  batchViolations,
  endStateViolations,
  outputViolations,
  waitForAllFinished,
  waitForOnlyLiveProcessRows,
} from "./chaos-checks.js";
import { ChaosCluster } from "./chaos-cluster.js";
import { openChaosDatabase } from "./chaos-database.js";
import { FaultInjector, faultMenu, type FaultCounts, type FaultKind } from "./chaos-faults.js";
import { analyseChaosLog, type ChaosLogReport } from "./chaos-log.js";
import { Random, type ChaosSettings } from "./chaos-settings.js";
import { type BatchShape, type FlowShape, enqueueRound, planRound } from "./chaos-workload.js";
import { waitFor } from "./harness.js";
import { isAlive } from "./supervised.js";
import type { Dialect } from "./test-database.js";

/** Supervisors running side by side: 2 × (supervisor, 2 workers, dispatcher) = 8 processes on one database. */
const SUPERVISORS = 2;

/** What a chaos run did and found. */
export interface ChaosReport {
  readonly dialect: Dialect;
  readonly settings: ChaosSettings;
  readonly faults: FaultCounts;
  readonly runs: ChaosLogReport["counts"];
  readonly supervisorsStarted: number;
  /** Flows and batches written. */
  readonly flows: number;
  readonly batches: number;
  readonly seconds: number;
  /** Of which: setting up and the fault rounds; then waiting for every job to finish once they stopped. */
  readonly faultsSeconds: number;
  readonly drainSeconds: number;
  /** Faults this run could not inject, and why. */
  readonly note: string | null;
  /** Every broken guarantee (the run log's first 25 in full); empty when the run proved what it should. */
  readonly violations: string[];
  /** How many violations of each kind, all of them counted. */
  readonly violationKinds: Record<string, number>;
  /** The run log, kept when there are violations (deleted otherwise). */
  readonly logFile: string;
}

/**
 * One chaos run on `dialect`: real `firm-queue start` processes work through the job mix while
 * faults are injected round after round; then the faults stop, the run must finish every job,
 * prune every dead process, and stop cleanly on TERM; then the run log and the database are
 * checked against the guarantees.
 */
export async function runChaos(dialect: Dialect, settings: ChaosSettings): Promise<ChaosReport> {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), "firm-queue-chaos-"));
  const logFile = join(dir, "runs.log");
  const random = new Random(settings.seed);
  const database = await openChaosDatabase(dialect);
  const cluster = new ChaosCluster(database.processUrl, logFile);
  const injector = new FaultInjector(cluster, database, random);
  const violations: string[] = [];
  const kinds: Record<string, number> = {};
  const violate = (kind: string, detail: string, count = 1) => {
    kinds[kind] = (kinds[kind] ?? 0) + count;
    violations.push(detail);
  };
  let runs: ChaosLogReport["counts"] = {
    starts: 0,
    ends: 0,
    fails: 0,
    aborts: 0,
    kills: 0,
    exits: 0,
    reruns: 0,
    rateStarts: 0,
    callbacks: 0,
    claimAheadMs: 0,
  };
  let observer: FirmQueue | undefined;
  let faultsSeconds = 0;
  let drainSeconds = 0;
  let enqueued: number[] = [];
  const ids: number[] = [];
  const flows: FlowShape[] = [];
  const batches: BatchShape[] = [];
  const enqueue = async (count: number) => {
    const round = await enqueueRound(database.directUrl, planRound(random, count));
    ids.push(...round.ids);
    flows.push(...round.flows);
    batches.push(...round.batches);
  };
  // Every job written, and the callback jobs the batches will enqueue when they end.
  const total = () => ids.length + batches.reduce((sum, batch) => sum + batch.callbacks.length, 0);
  try {
    const migrator = new FirmQueue({ databaseUrl: database.directUrl, logger: silentLogger });
    await migrator.migrate();
    await migrator.close();

    const perRound = Math.floor(settings.jobs / settings.rounds);
    await enqueue(settings.jobs - perRound * (settings.rounds - 1));
    for (let i = 0; i < SUPERVISORS; i++) await cluster.startSupervisor();

    const menu = faultMenu(database).filter((kind) => settings.faults === null || settings.faults.includes(kind));
    if (menu.length === 0) throw new Error(`no fault of ${settings.faults!.join(", ")} applies to ${dialect}`);
    let cycle: FaultKind[] = [];
    for (let round = 1; round <= settings.rounds; round++) {
      if (round > 1) await enqueue(perRound);
      // Every kind of fault comes up once per cycle, in a shuffled order.
      if (cycle.length === 0) cycle = random.shuffle(menu);
      await injector.inject(cycle.shift()!);
      await sleep(random.between(500, 1500));
      // A supervisor that died on its own is a violation (counted below); replace it to go on.
      while (cluster.running.length < SUPERVISORS) await cluster.startSupervisor();
    }

    faultsSeconds = Math.round((Date.now() - started) / 1000);
    observer = new FirmQueue({ databaseUrl: database.directUrl, logger: silentLogger });
    const db = (await observer.database()).db;
    const stuck = await waitForAllFinished(db, total(), 180_000, 45_000);
    if (stuck) violate("not-finished", stuck);
    drainSeconds = Math.round((Date.now() - started) / 1000) - faultsSeconds;
    // Dead rows go within the alive threshold (15 s) of the last fault, plus slack.
    const stale = await waitForOnlyLiveProcessRows(db, 60_000);
    if (stale) violate("process-rows-left", stale);

    for (const { pid, finished } of await cluster.stop()) {
      if (finished.code !== 0)
        violate(
          "term-exit-code",
          `supervisor ${pid} exited with ${finished.code ?? finished.signal} on TERM: ${tail(finished.stdout + finished.stderr)}`,
        );
    }
    const registered = cluster
      .lines()
      .flatMap((line) => (line.startsWith("ready ") ? [Number(line.split(" ")[1])] : []));
    try {
      await waitFor(() => registered.every((pid) => !isAlive(pid)), 30_000, "every role process gone");
    } catch {
      violate(
        "alive-after-stop",
        `role processes still alive after the final stop: ${registered.filter(isAlive).join(", ")}`,
      );
    }
    for (const left of await endStateViolations(db, total())) violate("left-behind", left);
    const written = await batchViolations(db, batches);
    for (const violation of written.violations) violate("batch", violation);
    enqueued = [...ids, ...written.callbackIds];
  } catch (error) {
    violate(
      "run-failed",
      `the run itself failed: ${(error as Error).stack ?? String(error)}\n--- output ---\n${tail(cluster.output(), 60)}`,
    );
  }
  // What the log and the output show, also after a run that could not finish.
  try {
    const analysis = analyseChaosLog(cluster.lines(), {
      keyLimit: KEY_LIMIT,
      flows,
      batches,
      rate: { limit: RATE_LIMIT, periodMs: RATE_PERIOD_MS },
    });
    runs = analysis.counts;
    analysis.violations.forEach((violation, index) => {
      if (index < 25)
        violate(violation.kind, `${violation.kind} (run log line ${violation.line}): ${violation.detail}`);
      else kinds[violation.kind] = (kinds[violation.kind] ?? 0) + 1;
    });
    if (analysis.violations.length > 25)
      violations.push(`… and ${analysis.violations.length - 25} more violations in the run log`);
    const lost = enqueued.filter((id) => !analysis.succeeded.has(id));
    if (lost.length > 0)
      violate("lost", `${lost.length} jobs never ran to the end: ${lost.slice(0, 20).join(", ")}`, lost.length);
    for (const exit of cluster.unexpectedExits) {
      violate(
        "supervisor-exit",
        `supervisor ${exit.pid} exited on its own (${exit.signal ?? `code ${exit.code}`}): ${tail(exit.output())}`,
      );
    }
    for (const line of outputViolations(cluster.output())) violate("database-locked", line);
  } finally {
    cluster.destroy();
    await observer?.close().catch(() => undefined);
    await database.close().catch(() => undefined);
    if (violations.length === 0) rmSync(dir, { recursive: true, force: true });
  }
  return {
    dialect,
    settings,
    faults: injector.counts,
    runs,
    supervisorsStarted: cluster.supervisors.length,
    flows: flows.length,
    batches: batches.length,
    seconds: Math.round((Date.now() - started) / 1000),
    faultsSeconds,
    drainSeconds,
    note: database.note,
    violations,
    violationKinds: kinds,
    logFile,
  };
}

/** The report as one line of figures, for the test output and docs/reliability.md. */
export function describeReport(report: ChaosReport): string {
  const f = report.faults;
  return [
    `chaos [${report.dialect}] seed=${report.settings.seed} rounds=${report.settings.rounds} jobs=${report.settings.jobs} ${report.seconds}s (faults ${report.faultsSeconds}s, drain ${report.drainSeconds}s):`,
    `kills: ${f.workerKills} workers, ${f.dispatcherKills} dispatchers, ${f.supervisorKills} supervisors (${report.supervisorsStarted} supervisors started);`,
    `server restarts: ${f.serverRestarts}; connection cuts: ${f.connectionDrops} drops (${f.droppedConnections} connections), ${f.stalls} stalls, ${f.refusals} refusals;`,
    `runs: ${report.runs.starts} started, ${report.runs.ends} succeeded, ${report.runs.fails} failed as planned, ${report.runs.aborts} aborted, ${report.runs.reruns} reruns;`,
    `workflows: ${report.flows} flows, ${report.batches} batches (${report.runs.callbacks} callback jobs); ${report.runs.rateStarts} rate-limited starts (claim times at most ${report.runs.claimAheadMs} ms ahead of the host clock);`,
    `violations: ${Object.values(report.violationKinds).reduce((sum, count) => sum + count, 0)}${describeKinds(report.violationKinds)}`,
    ...(report.note ? [`(${report.note})`] : []),
  ].join(" ");
}

function describeKinds(kinds: Record<string, number>): string {
  const entries = Object.entries(kinds);
  return entries.length === 0 ? "" : ` (${entries.map(([kind, count]) => `${kind} ${count}`).join(", ")})`;
}

function tail(text: string, lines = 15): string {
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}
