import { afterEach, expect, it } from "vitest";
import { countRows, describeEachDatabase, waitFor } from "./support/harness.js";
import { spawnCli, spawnNode, stopProcesses, type Spawned } from "./support/processes.js";

/** Processes a test started: stopped (TERM, then KILL) after it, whatever happened. */
const running: Spawned[] = [];

function started(spawned: Spawned): Spawned {
  running.push(spawned);
  return spawned;
}

/** Start an example server and wait for the address it prints. */
async function serve(script: string, databaseUrl: string): Promise<string> {
  const server = started(spawnNode([script], { DATABASE_URL: databaseUrl, PORT: "0", FIRM_QUEUE_LOG_LEVEL: "warn" }));
  let address: string | undefined;
  await waitFor(
    () => {
      address = /listening on (http:\/\/\S+)/.exec(server.output())?.[1];
      if (!address && server.child.exitCode !== null) throw new Error(`${script} exited:\n${server.output()}`);
      return address !== undefined;
    },
    30_000,
    `${script} to listen`,
  );
  return address!;
}

async function order(
  base: string,
  email: unknown,
): Promise<{ status: number; body: { orderId?: string; jobId?: number; error?: string } }> {
  const response = await fetch(`${base}/orders`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email }),
  });
  return { status: response.status, body: (await response.json()) as never };
}

describeEachDatabase("framework examples", (env) => {
  // Before the harness empties the tables (see stopProcesses).
  afterEach(() => stopProcesses(running));

  /** The app's own row for the order: confirmed once its job ran. */
  const confirmedCount = async (orderId: string) => {
    const db = await env.db();
    const row = await (db as any)
      .selectFrom("example_orders")
      .select("confirmed")
      .where("id", "=", orderId)
      .executeTakeFirst();
    return Number(row?.confirmed ?? -1);
  };

  it("Express: the request's transaction enqueues, a CLI worker runs the job, a rejected order enqueues nothing", async () => {
    const base = await serve("examples/express/server.mjs", env.url);
    started(
      spawnCli(["start", "--require", "examples/express/jobs.mjs", "--mode", "async", "--polling-interval", "100ms"], {
        DATABASE_URL: env.url,
        FIRM_QUEUE_LOG_LEVEL: "warn",
      }),
    );
    const placed = await order(base, "ada@example.com");
    expect(placed.status).toBe(201);
    expect(typeof placed.body.jobId).toBe("number");
    await waitFor(
      async () => (await confirmedCount(placed.body.orderId!)) === 1,
      30_000,
      "the worker to confirm the order",
    );
    const refused = await order(base, "not an address");
    expect(refused.status).toBe(400);
    expect(await countRows(await env.db(), "firm_queue_jobs")).toBe(1);
  });

  it("Hono: the app's Kysely is firm-queue's database, and the in-process worker runs the job", async () => {
    const base = await serve("examples/hono/server.mjs", env.url);
    const placed = await order(base, "grace@example.com");
    expect(placed.status).toBe(201);
    await waitFor(
      async () => (await confirmedCount(placed.body.orderId!)) === 1,
      30_000,
      "the in-process worker to confirm the order",
    );
  });

  it("Next.js-style route handler: Request in, Response out; a CLI worker runs the job", async () => {
    // What Next.js does on a request: import the route module and call its POST with a Request.
    const handler = started(
      spawnNode(
        [
          "--input-type=module",
          "-e",
          `const { POST } = await import("./examples/next-route/route.mjs");
           const response = await POST(new Request("http://localhost/api/orders", { method: "POST", body: JSON.stringify({ email: "linus@example.com" }) }));
           console.log(response.status, JSON.stringify(await response.json()));
           process.exit(0);`,
        ],
        { DATABASE_URL: env.url, FIRM_QUEUE_LOG_LEVEL: "warn" },
      ),
    );
    const { code, stdout } = await handler.finished;
    expect(code, handler.output()).toBe(0);
    const [status, json] = [stdout.slice(0, 3), JSON.parse(stdout.slice(4)) as { orderId: string; jobId: number }];
    expect(status).toBe("201");
    expect(await confirmedCount(json.orderId)).toBe(0);
    started(
      spawnCli(
        ["start", "--require", "examples/next-route/jobs.mjs", "--mode", "async", "--polling-interval", "100ms"],
        { DATABASE_URL: env.url, FIRM_QUEUE_LOG_LEVEL: "warn" },
      ),
    );
    await waitFor(async () => (await confirmedCount(json.orderId)) === 1, 30_000, "the worker to confirm the order");
  });
});
