import { createHash } from "node:crypto";
import type { QueryResult, RawBuilder } from "kysely";
import type { Db } from "./dialect.js";

/** The texts of the statements sent as named (prepared) statements, with their names. */
const namesByText = new Map<string, string>();

/**
 * Run one of the worker's hot statements (the claim, the finish) as a named statement: the server
 * parses and analyses its text once per connection instead of on every call, which on a claim of a
 * single job was more than half of the statement's time (docs/benchmarks.md, "Prepared claim and
 * finish"). Which statements are named is decided here, by text, because Kysely hands the pool
 * only the text and parameters; the pool (postgres-pool.ts) asks {@link preparedStatementName}.
 * Inside a transaction the statement goes unnamed: should the server connection have lost the
 * statement (a transaction pooler), the failure would abort the caller's transaction, where in
 * autocommit the pool can simply send it again unnamed.
 */
export function executePrepared<R>(db: Db, query: RawBuilder<R>): Promise<QueryResult<R>> {
  if (db.isTransaction) return query.execute(db);
  const compiled = query.compile(db);
  if (!namesByText.has(compiled.sql)) namesByText.set(compiled.sql, nameFor(compiled.sql));
  return db.executeQuery(compiled);
}

/** The name a statement text is prepared under, or undefined for a text sent unnamed. */
export function preparedStatementName(text: string): string | undefined {
  return namesByText.get(text);
}

/**
 * A name derived from the text alone, so the same name means the same statement in every process.
 * Behind a transaction pooler, statements prepared by one process may be met on a server
 * connection by another; with a counter for a name, one process's "statement 1" could be another's
 * different statement.
 */
function nameFor(text: string): string {
  return `firm_queue_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`;
}
