import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { countRows, describeEachDatabase, waitFor } from "./support/harness.js";
import { spawnCli, spawnNode, stopProcesses, type Spawned } from "./support/processes.js";

/** Processes and temp dirs a test started: stopped and removed after it, whatever happened. */
const running: Spawned[] = [];
const dirs: string[] = [];

function started(spawned: Spawned): Spawned {
  running.push(spawned);
  return spawned;
}

async function post(base: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${base}/receipts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describeEachDatabase("split web/worker example (examples/split-app)", (env) => {
  // Before the harness empties the tables (see stopProcesses).
  afterEach(async () => {
    await stopProcesses(running);
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("the web process enqueues from the declarations only, refuses invalid arguments, and a CLI worker runs the job", async () => {
    const dir = mkdtempSync(join(tmpdir(), "firm-split-app-"));
    dirs.push(dir);
    const mailLog = join(dir, "mail.log");
    const web = started(
      spawnNode(["examples/split-app/web.mjs"], { DATABASE_URL: env.url, PORT: "0", FIRM_QUEUE_LOG_LEVEL: "warn" }),
    );
    let base: string | undefined;
    await waitFor(
      () => {
        base = /listening on (http:\/\/\S+)/.exec(web.output())?.[1];
        if (!base && web.child.exitCode !== null) throw new Error(`web.mjs exited:\n${web.output()}`);
        return base !== undefined;
      },
      30_000,
      "web.mjs to listen",
    );

    const refused = await post(base!, { orderId: "o-1", email: "not an address" });
    expect(refused.status).toBe(400);
    expect(refused.body.issues).toEqual([expect.objectContaining({ path: "email" })]);
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(0);

    const placed = await post(base!, { orderId: "o-1", email: "ada@example.com" });
    expect(placed.status, JSON.stringify(placed.body)).toBe(201);
    const second = await post(base!, { orderId: "o-2", email: "ada@example.com", copies: 2 });
    expect(second.status).toBe(201);
    // The declaration's concurrency limit applied in the web process: one per address at a time.
    const states = await (await env.db())
      .selectFrom("firm_queue_jobs")
      .select(["id", "concurrency_key"])
      .orderBy("id")
      .execute();
    expect(states.map((row) => row.concurrency_key)).toEqual([
      "send-receipt/ada@example.com",
      "send-receipt/ada@example.com",
    ]);
    expect(await countRows(await env.db(), "firm_queue_blocked_executions")).toBe(1);

    started(
      spawnCli(
        ["start", "--require", "examples/split-app/worker.mjs", "--mode", "async", "--polling-interval", "100ms"],
        { DATABASE_URL: env.url, FIRM_QUEUE_LOG_LEVEL: "warn", MAIL_LOG: mailLog },
      ),
    );
    await waitFor(
      () => existsSync(mailLog) && readFileSync(mailLog, "utf8").trim().split("\n").length === 3,
      30_000,
      "the worker to send three mails",
    );
    expect(
      readFileSync(mailLog, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line)),
    ).toEqual([
      { to: "ada@example.com", subject: "Receipt for order o-1" },
      { to: "ada@example.com", subject: "Receipt for order o-2" },
      { to: "ada@example.com", subject: "Receipt for order o-2" },
    ]);
  });
});
