import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Db } from "../../src/database/dialect.js";
import type { TestEnv } from "./harness.js";
import { waitFor } from "./harness.js";
import { spawnCli, type Spawned } from "./processes.js";

/** The config the multi-process tests run with (short heartbeat, alive and shutdown timings). */
export const PROCESS_CONFIG = "test/fixtures/processes.config.ts";

/** A `firm-queue start` under test, with the files its jobs and hooks write to. */
export interface SupervisedRun extends Spawned {
  readonly jobLog: string;
  readonly hookLog: string;
  /** Lines of the job log ("start|done jobId pid"). */
  jobEvents(): string[];
  /** Lines of the hook log ("hook kind pid"). */
  hookEvents(): string[];
}

/** Start the built CLI on the test database with the process-test config and `args`. */
export function startSupervisor(
  env: TestEnv,
  args: readonly string[] = [],
  extraEnv: Record<string, string> = {},
  options: { detached?: boolean } = {},
): SupervisedRun {
  const dir = mkdtempSync(join(tmpdir(), "firm-queue-run-"));
  const jobLog = join(dir, "jobs.log");
  const hookLog = join(dir, "hooks.log");
  const spawned = spawnCli(
    ["start", "--config", PROCESS_CONFIG, ...args],
    {
      FIRM_QUEUE_DATABASE_URL: env.url,
      FIXTURE_LOG: jobLog,
      HOOK_LOG: hookLog,
      ...extraEnv,
    },
    options,
  );
  const lines = (file: string) =>
    existsSync(file)
      ? readFileSync(file, "utf8")
          .split("\n")
          .filter((line) => line !== "")
      : [];
  return { ...spawned, jobLog, hookLog, jobEvents: () => lines(jobLog), hookEvents: () => lines(hookLog) };
}

export interface ProcessRowView {
  readonly id: number;
  readonly kind: string;
  readonly pid: number;
  readonly supervisorId: number | null;
}

export async function processRows(db: Db): Promise<ProcessRowView[]> {
  const rows = await db
    .selectFrom("firm_queue_processes")
    .select(["id", "kind", "pid", "supervisor_id"])
    .orderBy("id")
    .execute();
  return rows.map((row) => ({
    id: Number(row.id),
    kind: row.kind,
    pid: Number(row.pid),
    supervisorId: row.supervisor_id === null ? null : Number(row.supervisor_id),
  }));
}

/** Wait until the supervisor and its children (one worker, one dispatcher by default) are registered. */
export async function waitForProcesses(
  db: Db,
  run: Spawned,
  expected: { workers?: number; dispatchers?: number } = {},
): Promise<ProcessRowView[]> {
  const workers = expected.workers ?? 1;
  const dispatchers = expected.dispatchers ?? 1;
  let rows: ProcessRowView[] = [];
  await waitWhile(
    run,
    async () => {
      rows = await processRows(db);
      const count = (kind: string) => rows.filter((row) => row.kind === kind).length;
      return count("Supervisor") === 1 && count("Worker") === workers && count("Dispatcher") === dispatchers;
    },
    `${workers} worker(s) and ${dispatchers} dispatcher(s) registered`,
  );
  return rows;
}

/** Whether a process with this pid is alive. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The stored error name of a failed job, or null. */
export async function failureName(db: Db, jobId: number): Promise<string | null> {
  const row = await db
    .selectFrom("firm_queue_failed_executions")
    .select("error")
    .where("job_id", "=", jobId)
    .executeTakeFirst();
  return row ? (JSON.parse(row.error!) as { name: string }).name : null;
}

/** {@link waitFor}, adding the run's output to the error so a failure says what the processes did. */
export async function waitWhile(
  run: Spawned,
  check: () => Promise<boolean> | boolean,
  what: string,
  timeout = 30_000,
): Promise<void> {
  try {
    await waitFor(check, timeout, what);
  } catch (error) {
    throw new Error(`${(error as Error).message}\n--- process output ---\n${run.output()}`);
  }
}
