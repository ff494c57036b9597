import { fork, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { waitFor } from "./harness.js";

/**
 * Two worker processes of test/fixtures/dependency-race-worker.mjs, one on queue "a" and one on
 * "b", each with `concurrency` slots: they hold every job they start until `release()`, so that
 * the race tests can end jobs on both at the same moment. `started` grows with the ids of the
 * jobs they have started.
 */
export class RaceWorkers {
  readonly started = new Set<number>();
  private readonly children: ChildProcess[];
  private ready = 0;

  constructor(databaseUrl: string, concurrency: number) {
    this.children = ["a", "b"].map((queue) =>
      fork(join(import.meta.dirname, "../fixtures/dependency-race-worker.mjs"), [], {
        env: {
          ...process.env,
          FIRM_QUEUE_DATABASE_URL: databaseUrl,
          FIXTURE_QUEUE: queue,
          FIXTURE_CONCURRENCY: String(concurrency),
        },
        stdio: ["ignore", "inherit", "inherit", "ipc"],
      }),
    );
    for (const child of this.children)
      child.on("message", (message: unknown) => {
        if (message === "ready") this.ready++;
        else this.started.add((message as { started: number }).started);
      });
  }

  /** Wait until both processes run their workers. */
  async whenReady(): Promise<void> {
    await waitFor(() => this.ready === 2, 60_000, "both worker processes");
  }

  /** Wait until every one of `ids` has started (and is held). */
  async whenStarted(ids: readonly number[], what: string): Promise<void> {
    await waitFor(() => ids.every((id) => this.started.has(id)), 30_000, what);
  }

  /** Let both processes end the jobs they hold, at once. */
  release(): void {
    for (const child of this.children) child.send("go");
  }

  /** Stop both processes and wait for their exits. */
  async stop(): Promise<void> {
    for (const child of this.children) child.send("stop");
    await Promise.all(
      this.children.map(
        (child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.on("exit", resolve))),
      ),
    );
  }
}
