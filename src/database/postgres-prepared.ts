import { createHash } from "node:crypto";
import type { QueryResult, RawBuilder } from "kysely";
import type { Db } from "./dialect.js";

/** The texts of the statements sent as named (prepared) statements, with their names. */
const namesByText = new Map<string, string>();

/**
 * Run one of the worker's hot statements (the claim, the finish) as a named statement: the server
 * parses and analyses its text once per connection instead of on every call, which on a claim of a
 * single job was more than half of the statement's time (bench/results/history.md, "Prepared claim and
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

/**
 * invalid_sql_statement_name, duplicate_prepared_statement: what a named statement meets when the
 * server connection under the client changes between calls (a transaction pooler such as
 * PgBouncer), so the statement is missing where it was parsed, or already there where it was not.
 */
const LOST_STATEMENT_CODES = new Set(["26000", "42P05"]);

/** One pool's choice: named statements until a server connection shows it cannot keep them. */
export interface StatementNaming {
  on: boolean;
}

/** A statement as node-postgres takes it; `name` makes it a named (prepared) one. */
export interface PgStatement {
  name?: string;
  text: string;
  values: unknown[];
}

/**
 * Send `text` through `query` named when it is one of the prepared statements and the pool's
 * naming is still on, else unnamed. A named statement that fails because the server connection
 * lost it or had it already (a transaction pooler) did not run: naming goes off for the whole
 * pool, and the statement is sent again unnamed. Only connections running in autocommit may come
 * here (a pool's checked-out clients, never an application's open transaction), so no transaction
 * is left aborted by the failed attempt.
 */
export async function sendNamedWhenPrepared<R>(
  query: (statement: PgStatement) => Promise<R>,
  text: string,
  values: unknown[],
  naming: StatementNaming,
): Promise<R> {
  const name = naming.on ? preparedStatementName(text) : undefined;
  if (name === undefined) return query({ text, values });
  try {
    return await query({ name, text, values });
  } catch (error) {
    if (!LOST_STATEMENT_CODES.has((error as { code?: string })?.code ?? "")) throw error;
    naming.on = false;
    return query({ text, values });
  }
}
