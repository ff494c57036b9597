// `firm-queue check`'s warnings about replication settings that break the guarantees
// (docs/high-availability.md): on a PostgreSQL primary with a standby of the test's own, and on the
// suite's plain servers, which get none. Galera's wsrep_sync_wait is checked in ha-galera.test.ts.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeClusterWarnings } from "../src/cli/cluster-warnings.js";
import { FirmQueue, silentLogger } from "../src/index.js";
import { PostgresPair } from "./support/postgres-pair.js";
import { createTestDatabase, testDialects } from "./support/test-database.js";

async function warningsFor(url: string): Promise<string[]> {
  const firm = new FirmQueue({ databaseUrl: url, logger: silentLogger });
  try {
    return await describeClusterWarnings(firm);
  } finally {
    await firm.close();
  }
}

describe.each(testDialects())("firm-queue check on a single server [%s]", (dialect) => {
  it("warns about no replication setting", async () => {
    const database = await createTestDatabase(dialect);
    try {
      expect(await warningsFor(database.url)).toEqual([]);
    } finally {
      await database.drop();
    }
  });
});

describe.skipIf(!testDialects().includes("postgres") || !PostgresPair.available())(
  "firm-queue check on a PostgreSQL primary with a standby",
  () => {
    let asyncPair: PostgresPair;
    let syncPair: PostgresPair;
    beforeAll(async () => {
      [asyncPair, syncPair] = await Promise.all([PostgresPair.start("async"), PostgresPair.start("sync")]);
    }, 120_000);
    afterAll(() => Promise.all([asyncPair?.stop(), syncPair?.stop()]));

    it("names synchronous_standby_names when replication is asynchronous", async () => {
      const [warning, ...others] = await warningsFor(asyncPair.adminUrl(asyncPair.primary));
      expect(others).toEqual([]);
      expect(warning).toMatch(
        /^WARNING: +synchronous_standby_names=empty: replication to the 1 standby\(s\) is asynchronous/,
      );
    });

    it("names synchronous_commit when firm-queue's sessions commit locally, and is quiet when they wait", async () => {
      const url = syncPair.adminUrl(syncPair.primary);
      expect(await warningsFor(url)).toEqual([]);
      const local = await warningsFor(`${url}?options=${encodeURIComponent("-c synchronous_commit=local")}`);
      expect(local).toHaveLength(1);
      expect(local[0]).toMatch(/^WARNING: +synchronous_commit=local in firm-queue's sessions/);
    });
  },
);
