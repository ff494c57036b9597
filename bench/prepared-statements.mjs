// npm run bench:prepared -- [--jobs 300] [--rounds 3] [--durable]
//
// What sending the worker's statements named (prepared once per connection) saves on PostgreSQL,
// one job at a time, as an idle worker meets them: each job is enqueued alone, claimed alone and
// recorded finished alone, and each of the three statements' round trips is timed. Three instances
// take turns on the same throwaway server and database: firm-queue opened on the URL (its own
// pool, which names these statements), firm-queue handed an application's pg.Pool (whose
// checked-out clients name them too) and firm-queue handed a Kysely instance (whose driver takes
// only a text and parameters, so every statement goes unnamed). Prints the median round trip of
// each statement per instance, and each one's ratio to the first, per round.
import { parseArgs } from "node:util";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { startPostgres } from "../scripts/servers/postgres.mjs";
import { FirmQueue, silentLogger } from "../dist/index.js";
import { registerProcess } from "../dist/models/process.js";
import { claimJobs } from "../dist/roles/claims.js";
import { QueueSelector } from "../dist/roles/queue-selector.js";
import { finishClaimedJobs } from "../dist/lifecycle/claimed-jobs.js";
import { JobPolicies } from "../dist/definitions/job-policies.js";
import { JobRegistry } from "../dist/definitions/job-registry.js";
import { benchDatabase } from "./databases.mjs";

const { values } = parseArgs({
  options: {
    jobs: { type: "string", default: "300" },
    rounds: { type: "string", default: "3" },
    durable: { type: "boolean", default: false },
  },
});
const jobs = Number(values.jobs);
const server = await startPostgres({ durable: values.durable });
const database = await benchDatabase("postgres", server.url);
const appPool = new pg.Pool({ connectionString: database.url, max: 2 });
const appKysely = new Kysely({
  dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 2 }) }),
});
try {
  const instances = {
    "own pool (named)": new FirmQueue({ databaseUrl: database.url, logger: silentLogger, poolSize: 2 }),
    "pg.Pool handed in (named)": new FirmQueue({ database: appPool, logger: silentLogger }),
    "Kysely handed in (unnamed)": new FirmQueue({ database: appKysely, logger: silentLogger }),
  };
  await instances["own pool (named)"].migrate();
  const policies = new JobPolicies(new JobRegistry(), silentLogger);
  const selector = new QueueSelector("*");
  for (let round = 1; round <= Number(values.rounds); round++) {
    const medians = {};
    for (const [label, firm] of Object.entries(instances)) {
      const job = firm.defineJob(`one-${round}-${label}`, () => undefined);
      const db = await firm.database();
      const processId = await registerProcess(db.db, { kind: "Worker", name: `bench-${round}-${label}` }, new Date());
      const times = { enqueue: [], claim: [], finish: [] };
      const timed = async (what, work) => {
        const started = performance.now();
        const result = await work();
        times[what].push(performance.now() - started);
        return result;
      };
      for (let i = 0; i < jobs; i++) {
        await timed("enqueue", () => job.enqueue(null));
        const claimed = await timed("claim", () => claimJobs(db, selector, 24, processId));
        if (claimed.length !== 1) throw new Error(`claimed ${claimed.length} jobs, expected 1`);
        await timed("finish", () => finishClaimedJobs(db, policies, processId, claimed, true));
      }
      medians[label] = Object.fromEntries(Object.entries(times).map(([what, list]) => [what, median(list)]));
    }
    const [reference, ...others] = Object.entries(medians);
    console.log(`round ${round} (median round trip, ms, ${jobs} jobs each; ratio to ${reference[0]}):`);
    for (const what of ["enqueue", "claim", "finish"])
      console.log(
        `  ${what.padEnd(7)} ${reference[0]} ${reference[1][what].toFixed(3)}${others
          .map(
            ([label, times]) =>
              `  ${label} ${times[what].toFixed(3)} (${(times[what] / reference[1][what]).toFixed(2)}×)`,
          )
          .join("")}`,
      );
  }
  await Promise.all(Object.values(instances).map((firm) => firm.close()));
} finally {
  await appPool.end();
  await appKysely.destroy();
  await database.cleanup();
  await server.stop();
}

function median(list) {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
