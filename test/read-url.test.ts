// readUrl (docs/high-availability.md): firm.inspect and the dashboard read from a replica, the rest
// stays on the primary. Here without a real replica: the configuration checks on every database,
// a server that replicates from no one as its own "replica", and an unreachable replica. Real
// replicas with lag: test/ha-postgres.test.ts and test/ha-mariadb-replica.test.ts.

import { createServer } from "node:net";
import { expect, test } from "vitest";
import { createDashboard, FirmQueue, ReadUrlError, silentLogger } from "../src/index.js";
import { describeEachDatabase } from "./support/harness.js";

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describeEachDatabase("readUrl", (env) => {
  test("is refused with ReadUrlError where it cannot be a replica of the database", () => {
    if (env.dialect === "sqlite") {
      expect(() => env.firm({ readUrl: "sqlite:replica.sqlite3" })).toThrow(ReadUrlError);
      expect(() => env.firm({ readUrl: "postgres://localhost/app" })).toThrow(/SQLite has no replicas/);
      return;
    }
    const other = env.dialect === "postgres" ? "mysql://root@127.0.0.1/app" : "postgres://postgres@127.0.0.1/app";
    expect(() => env.firm({ readUrl: other })).toThrow(ReadUrlError);
    expect(() => env.firm({ readUrl: other })).toThrow(/readUrl .* is (mysql|postgres) but the database is/);
    expect(() => env.firm({ readUrl: "sqlite:replica.sqlite3" })).toThrow(/SQLite has no replicas/);
    // Nothing was opened or written by the refused instances: a readUrl of the right kind works.
    expect(env.firm({ readUrl: env.url }).options.readUrl).toBe(env.url);
  });

  test("without readUrl everything reads from the primary and replication() says so with null", async () => {
    const firm = env.firm();
    expect(await firm.inspect.replication()).toBeNull();
  });

  if (env.dialect === "sqlite") return;

  test("a server that replicates from no one is read as it is, with no lag", async () => {
    const firm = env.firm({ readUrl: env.url });
    firm.defineJob("noop", async () => {});
    await firm.enqueue("noop", {});
    expect(await firm.inspect.replication()).toMatchObject({
      readsFrom: "replica",
      reason: null,
      replica: { role: "primary", following: true, lagMs: 0 },
    });
    expect(await firm.inspect.count({ state: "ready" })).toEqual({ count: 1, exact: true });
  });

  test("an unreachable replica sends reads to the primary, and the dashboard says why", async () => {
    const port = await closedPort();
    const unreachable =
      env.dialect === "postgres"
        ? `postgres://postgres@127.0.0.1:${port}/nothing`
        : `mysql://root@127.0.0.1:${port}/nothing`;
    const firm = env.firm({ readUrl: unreachable });
    firm.defineJob("noop", async () => {});
    await firm.enqueue("noop", {});
    const source = await firm.inspect.replication();
    expect(source).toMatchObject({ readsFrom: "primary", replica: null });
    expect(source!.reason).toMatch(/the replica did not answer/);
    expect(await firm.inspect.count({ state: "ready" })).toEqual({ count: 1, exact: true });
    const page = await (
      await createDashboard({ firm, allowUnauthenticated: true }).fetch(new Request("http://localhost/"))
    ).text();
    expect(page).toContain('data-replication="primary"');
    expect(page).toContain("Read from the primary: the replica did not answer");
  });

  test("the dashboard's header names the replica it reads and its lag", async () => {
    const firm = new FirmQueue({ databaseUrl: env.url, readUrl: env.url, logger: silentLogger });
    try {
      const page = await (
        await createDashboard({ firm, allowUnauthenticated: true }).fetch(new Request("http://localhost/"))
      ).text();
      expect(page).toContain('data-replication="replica"');
      expect(page).toContain("replica · not a replica");
      expect(page).not.toContain("Read from the primary");
    } finally {
      await firm.close();
    }
  });
});
