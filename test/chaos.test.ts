import { describe, expect, it } from "vitest";
import { describeReport, runChaos } from "./support/chaos-run.js";
import { chaosSettings } from "./support/chaos-settings.js";
import { testDialects } from "./support/test-database.js";

const settings = chaosSettings();

// The chaos suite (docs/reliability.md): real `firm-queue start` processes — two supervisors, each
// with two worker processes and a dispatcher, heartbeats every second — run thousands of jobs, plain
// and keyed (limit 1 per key), in flows and batches, and rate limited, while workers and
// supervisors are SIGKILLed, the database server is restarted, and connections are cut, stalled
// and refused through a proxy. Then everything is stopped with TERM and the run is checked: every
// job finished and none lost; a job ran again only after its previous run's process died (or the
// run failed or was aborted); no key ever over its limit; no parent or batch callback before what it
// waits for finished, one callback job per batch; no rate window over its limit; no claim, slot or
// process row left; exit 0 on TERM; no "database is locked" printed.
// FIRM_QUEUE_CHAOS_ROUNDS / _JOBS / _SEED / _FAULTS make it longer, replay one or narrow the faults (test/support/chaos-settings.ts).
describe.each(testDialects())("chaos [%s]", (dialect) => {
  it(
    "kills, restarts and cut connections lose no job, double no run, and break no limit",
    async () => {
      const report = await runChaos(dialect, settings);
      console.log(describeReport(report));
      const kept = report.violations.length > 0 ? `\n(run log kept at ${report.logFile})` : "";
      expect(report.violations, `${describeReport(report)}${kept}`).toEqual([]);
      // The run did what it claims: faults happened and jobs ran through them.
      const { workerKills, supervisorKills, serverRestarts, connectionDrops, stalls, refusals } = report.faults;
      expect(workerKills + supervisorKills + serverRestarts + connectionDrops + stalls + refusals).toBeGreaterThan(0);
      expect(report.runs.ends).toBeGreaterThanOrEqual(settings.jobs);
      // A run of the default size or more has every kind of job of the mix (a tiny one may not).
      if (settings.jobs >= 1000) {
        expect(report.flows).toBeGreaterThan(0);
        expect(report.batches).toBeGreaterThan(0);
        expect(report.runs.callbacks).toBeGreaterThan(0);
        expect(report.runs.rateStarts).toBeGreaterThan(0);
      }
    },
    // A loaded machine is slow to boot processes and servers; longer runs get more time.
    300_000 + settings.rounds * 30_000,
  );
});
