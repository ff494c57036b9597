import { afterEach, describe, expect, it } from "vitest";
import { HealthChecks } from "../src/facade/health-checks.js";
import { startObservabilityServer, type ObservabilityServer } from "../src/facade/observability-server.js";
import { ConfigurationError, type FirmQueue } from "../src/index.js";
import { describeEachDatabase, waitFor } from "./support/harness.js";
import { TcpProxy } from "./support/tcp-proxy.js";
import { parseScrape } from "./support/prometheus-text.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(
  firm: FirmQueue,
  databaseTimeoutMs = 5000,
): Promise<{ health: HealthChecks; server: ObservabilityServer }> {
  const health = new HealthChecks(firm.inspect, {
    aliveThresholdMs: 3000,
    databaseTimeoutMs,
    maxEventLoopDelayMs: 10_000,
  });
  const server = await startObservabilityServer({ port: 0, metrics: firm.metrics, health });
  cleanups.push(
    () => health.close(),
    () => server.close(),
  );
  return { health, server };
}

async function probe(
  server: ObservabilityServer,
  path: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(new URL(path, server.url));
  expect(response.headers.get("content-type")).toContain("application/json");
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describeEachDatabase("health probes", (env) => {
  it("is live at once, ready once the supervisor's roles heartbeat, and not ready when a role's heartbeat is overdue or it stopped", async () => {
    const firm = env.firm();
    firm.defineJob("noop", async () => undefined);
    const { health, server } = await serve(firm);
    expect(await probe(server, "/livez")).toMatchObject({ status: 200, body: { status: "ok" } });
    expect(await probe(server, "/readyz")).toMatchObject({ status: 503, body: { status: "starting", ready: false } });
    const supervisor = await firm.start({
      workers: [{ queues: "*", processes: 2 }],
      dispatchers: [{}],
      processHeartbeatInterval: "60s",
    });
    health.watch(supervisor);
    const ready = await probe(server, "/readyz");
    expect(ready).toMatchObject({
      status: 200,
      body: { ready: true, database: { ok: true }, roles: { expected: 3, alive: 3, stale: 0 } },
    });
    // One worker's heartbeat falls behind the alive threshold (3s).
    const db = await env.db();
    const worker = await db
      .selectFrom("firm_queue_processes")
      .select("id")
      .where("kind", "=", "Worker")
      .executeTakeFirstOrThrow();
    await db
      .updateTable("firm_queue_processes")
      .set({ last_heartbeat_at: new Date(Date.now() - 60_000) })
      .where("id", "=", worker.id)
      .execute();
    expect(await probe(server, "/readyz")).toMatchObject({
      status: 503,
      body: { ready: false, status: "roles missing or not heartbeating", roles: { expected: 3, alive: 2, stale: 1 } },
    });
    await supervisor.stop();
    expect(await probe(server, "/readyz")).toMatchObject({ status: 503, body: { status: "stopped" } });
    expect((await fetch(new URL("/nowhere", server.url))).status).toBe(404);
  });
});

describeEachDatabase(
  "health probes with the database cut off",
  (env) => {
    it("readyz turns 503 while the database does not answer, and 200 again when it does", async () => {
      const target = new URL(env.url);
      const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port) });
      cleanups.push(() => proxy.close());
      const firm = env.firm({ databaseUrl: proxy.rewrite(env.url) });
      firm.metrics.configure({ gaugeInterval: 0, gaugeTimeout: "1s" });
      firm.defineJob("noop", async () => undefined);
      const { health, server } = await serve(firm, 1000);
      const supervisor = await firm.start({
        workers: [{ queues: "*" }],
        dispatchers: [],
        processHeartbeatInterval: "60s",
      });
      cleanups.unshift(() => supervisor.stop({ immediate: true }));
      health.watch(supervisor);
      expect((await probe(server, "/readyz")).status).toBe(200);
      proxy.setMode("stall");
      const cut = await probe(server, "/readyz");
      expect(cut).toMatchObject({ status: 503, body: { status: "database unreachable", database: { ok: false } } });
      expect(String((cut.body.database as { error: string }).error)).toMatch(
        /did not answer the readiness check within 1000 ms/,
      );
      // Liveness is about this process, not the database.
      expect((await probe(server, "/livez")).status).toBe(200);
      const scrape = await (await fetch(new URL("/metrics", server.url))).text();
      expect(parseScrape(scrape).value("firm_queue_database_up")).toBe(0);
      proxy.setMode("pass");
      await waitFor(async () => (await probe(server, "/readyz")).status === 200, 30_000, "ready again");
    });
  },
  ["postgres", "mysql"],
);

describe("the observability server", () => {
  it("names the address it could not listen on", async () => {
    const taken = await startObservabilityServer({ port: 0 });
    cleanups.push(() => taken.close());
    const port = Number(new URL(taken.url).port);
    await expect(startObservabilityServer({ port })).rejects.toThrow(
      new ConfigurationError(
        `could not listen on 127.0.0.1:${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}`,
      ),
    );
    await expect(startObservabilityServer({ port: 70000 })).rejects.toThrow(/port must be 0-65535, got 70000/);
  });
});
