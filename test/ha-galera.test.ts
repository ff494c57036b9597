// High availability on MariaDB (docs/high-availability.md): a three-node Galera cluster of the
// test's own (test/support/galera-cluster.ts), a `firm-queue start` supervisor on each node, writes
// on every node, and a node SIGKILLed and rejoined mid-run. Runs when MariaDB is under test;
// without galera-4 or rsync it is skipped loudly, and with CI set it fails instead.
// FIRM_QUEUE_GALERA_KILLS=N makes the node-kill run longer (default 1 kill); FIRM_QUEUE_HA_SEED replays one.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeClusterWarnings } from "../src/cli/cluster-warnings.js";
import { FirmQueue, silentLogger } from "../src/index.js";
import { describeGalera, runGalera } from "./support/galera-run.js";
import { GaleraCluster } from "./support/galera-cluster.js";
import { testDialects } from "./support/test-database.js";

const KILLS = Math.max(1, Number(process.env.FIRM_QUEUE_GALERA_KILLS ?? "1") || 1);
const SEED = Number(process.env.FIRM_QUEUE_HA_SEED ?? Date.now() % 100_000);

const wanted = testDialects().includes("mysql");
const unavailable = GaleraCluster.unavailableReason();
const ci = !["", "0", "false"].includes((process.env.CI ?? "").trim().toLowerCase());
if (wanted && unavailable) {
  if (ci) throw new Error(`The Galera tests must run in CI, but ${unavailable}. .ci/run installs galera-4 and rsync.`);
  const bar = "!".repeat(78);
  console.warn(`\n${bar}\n!!! GALERA TESTS SKIPPED: ${unavailable}.\n${bar}\n`);
}

describe.skipIf(!wanted || unavailable !== null)("MariaDB Galera cluster, three nodes", () => {
  let cluster: GaleraCluster;
  beforeAll(async () => {
    cluster = await GaleraCluster.start();
  }, 300_000);
  afterAll(() => cluster?.stop());

  it("firm-queue check names wsrep_sync_wait until reads wait for the cluster", async () => {
    const node = cluster.nodes[1]!;
    await cluster.sql(node, "CREATE DATABASE IF NOT EXISTS firm_check");
    const warningsOn = async () => {
      const firm = new FirmQueue({ databaseUrl: cluster.url(node, "firm_check"), logger: silentLogger });
      try {
        return await describeClusterWarnings(firm);
      } finally {
        await firm.close();
      }
    };
    const warnings = await warningsOn();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^WARNING: +wsrep_sync_wait=0 \(reads do not wait for the cluster\)/);
    await cluster.sql(node, "SET GLOBAL wsrep_sync_wait = 1");
    try {
      expect(await warningsOn()).toEqual([]);
    } finally {
      await cluster.sql(node, "SET GLOBAL wsrep_sync_wait = 0");
    }
  });

  it("workers on every node lose no job, run none twice, break no limit, lose or double no tick", async () => {
    const report = await runGalera(cluster, SEED, 300, 0);
    console.log(describeGalera(report));
    expect(report.violations, `${describeGalera(report)} (log ${report.logFile})`).toEqual([]);
    expect(report.runs.ends).toBeGreaterThanOrEqual(report.jobs);
    expect(report.ticks.count).toBeGreaterThan(2);
  }, 300_000);

  it(
    "a node SIGKILLed and rejoined mid-run changes none of that",
    async () => {
      const report = await runGalera(cluster, SEED + 1, 300, KILLS);
      console.log(describeGalera(report));
      expect(report.violations, `${describeGalera(report)} (log ${report.logFile})`).toEqual([]);
      expect(report.rejoinMs).toHaveLength(KILLS);
      expect(report.runs.ends).toBeGreaterThanOrEqual(report.jobs);
    },
    300_000 + KILLS * 120_000,
  );
});
