import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeAll, expect, it } from "vitest";
import { countRows, describeEachDatabase, waitFor } from "./support/harness.js";
import { ROOT, spawnNode, stopProcesses, type Spawned } from "./support/processes.js";

// examples/nestjs, compiled as a Nest app is (tsc with experimentalDecorators and
// emitDecoratorMetadata, its own tsconfig), then booted: a controller enqueues inside the app's
// transaction, a @JobHandler provider method runs the job with its injected dependencies, the
// dashboard answers at /jobs, and TERM stops the workers through the app's shutdown hooks.
const MAIN = join(ROOT, ".tmp", "examples-nestjs", "nestjs", "src", "main.js");
const running: Spawned[] = [];

beforeAll(async () => {
  await promisify(execFile)(join(ROOT, "node_modules", ".bin", "tsc"), ["-p", "examples/nestjs/tsconfig.json"], {
    cwd: ROOT,
  });
}, 120_000);

describeEachDatabase("the NestJS example", (env) => {
  afterEach(() => stopProcesses(running));

  const confirmed = async (orderId: string) => {
    const row = await ((await env.db()) as any)
      .selectFrom("example_orders")
      .select("confirmed")
      .where("id", "=", orderId)
      .executeTakeFirst();
    return Number(row?.confirmed ?? -1);
  };

  it("boots, enqueues through a controller in the app's transaction, runs the @JobHandler method, serves the dashboard and stops on TERM", async () => {
    const app = spawnNode([MAIN], { DATABASE_URL: env.url, PORT: "0" });
    running.push(app);
    let base: string | undefined;
    await waitFor(
      () => {
        base = /listening on (http:\/\/\S+)/.exec(app.output())?.[1];
        if (!base && app.child.exitCode !== null) throw new Error(`the app exited:\n${app.output()}`);
        return base !== undefined;
      },
      60_000,
      "the Nest app to listen",
    );
    const post = (email: unknown) =>
      fetch(`${base}/orders`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email }),
      });
    const placed = await post("ada@example.com");
    expect(placed.status).toBe(201);
    const { orderId, jobId } = (await placed.json()) as { orderId: string; jobId: number };
    await waitFor(async () => (await confirmed(orderId)) === 1, 30_000, "the handler to confirm the order");
    // The handler's own log line: the method ran on the provider, with its injected database.
    await waitFor(
      () => app.output().includes(`confirmed order ${orderId} (job ${jobId})`),
      10_000,
      "the handler's log",
    );
    const job = await env.firm().getJob(jobId);
    expect(job).toMatchObject({ name: "confirm-order", queue: "mail", state: "finished" });

    // A refused order rolls the transaction back: no job.
    expect((await post("not an address")).status).toBe(400);
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(1);

    const dashboard = await fetch(`${base}/jobs`);
    expect(dashboard.status).toBe(200);
    expect(await dashboard.text()).toContain("/jobs/");

    app.child.kill("SIGTERM");
    const stopped = await app.finished;
    // Nest's shutdown hooks ran (the workers stopped, then the FirmQueue closed); Nest then
    // raises the signal again, so the process ends by SIGTERM, as any Nest app does.
    expect(stopped.stderr).toMatch(/supervisor stopping[^\n]*immediate=false[\s\S]*supervisor stopped/);
    expect(stopped.signal).toBe("SIGTERM");
  }, 120_000);
});
