import { sql, type RawBuilder } from "kysely";
import type { Db } from "./dialect.js";

/**
 * Run `body` (statements separated by `;`) as one MariaDB anonymous block
 * (`BEGIN NOT ATOMIC … END`) inside one transaction it opens and commits itself: one round trip
 * for what would otherwise be a round trip per statement. Resolves to the result sets of the
 * block's SELECTs, in order. A failed statement leaves the transaction open (InnoDB undoes only
 * that statement, unless it was a deadlock), so the same connection rolls it back before it goes
 * back to the pool.
 *
 * With `endsItself`, the body opens and ends its transaction itself (it may roll it back) and may
 * begin with `DECLARE`s: the block adds neither `START TRANSACTION` nor `COMMIT`.
 */
export function inOneBlock(
  db: Db,
  body: RawBuilder<unknown>,
  options: { readonly endsItself?: boolean } = {},
): Promise<unknown[][]> {
  const block = options.endsItself
    ? sql`BEGIN NOT ATOMIC ${body}; END`
    : sql`BEGIN NOT ATOMIC START TRANSACTION; ${body}; COMMIT; END`;
  return db.connection().execute(async (connection) => {
    try {
      const { rows } = await block.execute(connection);
      // mysql2 hands a block's results back as a list: each SELECT's rows, then an OK packet.
      return (rows as unknown[]).filter((result): result is unknown[][] => Array.isArray(result)) as unknown[][];
    } catch (error) {
      await sql`ROLLBACK`.execute(connection).catch(() => undefined);
      throw error;
    }
  });
}
