// Every system the comparison knows, in the order they run. firm-queue on PostgreSQL comes first:
// it is the reference the ratios are taken against (unless --reference names another). Variants
// of one library are systems of their own, each with its id.
import { bullmqAdapter } from "./bullmq.mjs";
import { firmQueueAdapter } from "./firm-queue.mjs";
import { graphileWorkerAdapter } from "./graphile-worker.mjs";
import { pgBossAdapter } from "./pg-boss.mjs";
import { LEAN_SCHEMA_WHAT_IF } from "./schema-what-if.mjs";

/** @type {readonly import("./adapter.mjs").PeerAdapter[]} */
export const ADAPTERS = [
  firmQueueAdapter("postgres"),
  firmQueueAdapter("postgres", { preserveFinishedJobs: false }),
  pgBossAdapter({ batched: false }),
  pgBossAdapter({ batched: true }),
  graphileWorkerAdapter({ batched: false }),
  graphileWorkerAdapter({ batched: true }),
  bullmqAdapter("postgres"),
  firmQueueAdapter("sqlite"),
  firmQueueAdapter("mysql"),
  bullmqAdapter("redis"),
  // Runs only when named with --systems: a schema what-if, not a setting (./schema-what-if.mjs).
  firmQueueAdapter("postgres", {
    whatIf: {
      id: "lean",
      label: "no finished_at indexes, no claim foreign key",
      statements: LEAN_SCHEMA_WHAT_IF,
    },
  }),
];

/** The system every ratio is relative to. */
export const REFERENCE_ID = "firm-queue-postgres";
