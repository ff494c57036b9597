import type { KyselyPlugin, RootOperationNode } from "kysely";
import type { Database } from "../../src/database/connection.js";

/**
 * Counts the INSERT statements a transaction sends, per table: Kysely's INSERT queries, and every
 * `INSERT INTO table` in a raw statement (a dialect's one-statement writes).
 */
export function insertCounter(): { plugin: KyselyPlugin; inserts: Map<string, number> } {
  const inserts = new Map<string, number>();
  const add = (table: string) => inserts.set(table, (inserts.get(table) ?? 0) + 1);
  const plugin: KyselyPlugin = {
    transformQuery({ node }) {
      const root = node as RootOperationNode & {
        into?: { table: { identifier: { name: string } } };
        sqlFragments?: readonly string[];
      };
      if (root.kind === "InsertQueryNode" && root.into) add(root.into.table.identifier.name);
      if (root.kind === "RawNode")
        for (const match of root.sqlFragments!.join("?").matchAll(/INSERT INTO (\w+)/g)) add(match[1]!);
      return node;
    },
    async transformResult({ result }) {
      return result;
    },
  };
  return { plugin, inserts };
}

/** Run `work` with every write transaction of `database` counting its INSERT statements per table. */
export async function countingInserts(
  database: Database,
  work: () => Promise<unknown>,
): Promise<Record<string, number>> {
  const { plugin, inserts } = insertCounter();
  const original = database.writeTransaction.bind(database);
  const patched = database as { writeTransaction: Database["writeTransaction"] };
  patched.writeTransaction = (write) => original((trx) => write(trx.withPlugin(plugin)));
  try {
    await work();
  } finally {
    patched.writeTransaction = original;
  }
  return Object.fromEntries(inserts);
}
