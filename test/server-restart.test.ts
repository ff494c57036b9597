import mysql from "mysql2/promise";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { FirmQueue, silentLogger } from "../src/index.js";
import { ownServerStarter } from "./support/chaos-database.js";
import { createDatabaseOn, testDialects } from "./support/test-database.js";

/** A plain driver connection that reports when the server drops it (as servers.test.ts does per database). */
const holders = {
  async postgres(url: string) {
    const client = new pg.Client({ connectionString: url });
    const dropped = new Promise<true>((resolve) => client.on("error", () => resolve(true)));
    await client.connect();
    return { dropped };
  },
  async mysql(url: string) {
    const connection = await mysql.createConnection(url);
    return { dropped: new Promise<true>((resolve) => connection.on("error", () => resolve(true))) };
  },
};

// The chaos suite restarts database servers mid-run; this checks the restart itself, on a server
// of the test's own: same URL afterwards, data kept, and connections from before are cut.
const restartable = testDialects().flatMap((dialect) => {
  const starter = ownServerStarter(dialect);
  return starter && dialect !== "sqlite" ? [[dialect, starter] as const] : [];
});

describe.runIf(restartable.length > 0).each(restartable)("a test server restart [%s]", (dialect, start) => {
  it("comes back on the same port with its data, and connections from before it are dropped", async () => {
    const server = await start();
    try {
      const database = await createDatabaseOn(dialect, server.url);
      try {
        const firm = new FirmQueue({ databaseUrl: database.url, logger: silentLogger });
        await firm.migrate();
        const id = (await firm.enqueue("kept", { n: 1 }, { undeclared: true })).id;
        await firm.close();
        const { dropped } = await holders[dialect](database.url);
        await server.restart();
        expect(await Promise.race([dropped, new Promise((resolve) => setTimeout(resolve, 10_000, false))])).toBe(true);
        const after = new FirmQueue({ databaseUrl: database.url, logger: silentLogger });
        try {
          expect(await after.getJob(id!)).toMatchObject({ id, name: "kept", arguments: { n: 1 } });
        } finally {
          await after.close();
        }
      } finally {
        await database.drop();
      }
    } finally {
      await server.stop();
    }
  }, 120_000);
});
