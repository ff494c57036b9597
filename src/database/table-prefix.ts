import type { Kysely } from "kysely";
import { ConfigurationError } from "../errors.js";
import type { UniqueIndex } from "./dialect.js";
import { TablePrefixPlugin } from "./table-prefix-plugin.js";
import { shown } from "../shown-value.js";

/**
 * The prefix firm-queue's code is written with: every table, index, trigger, function and the
 * NOTIFY channel is spelled `firm_queue_…` (or `index_firm_queue_…`) in the source. A database
 * set up with another prefix gets the same names with this part replaced, at one place: see
 * {@link TableNames}.
 */
export const DEFAULT_TABLE_PREFIX = "firm_queue_";

/**
 * Longest prefix accepted. The longest name firm-queue creates is an index name 49 characters
 * long without its prefix (`index_…claimed_executions_on_process_id_and_job_id`), and PostgreSQL
 * cuts identifiers at 63 characters (MariaDB refuses them past 64): 49 + 14 = 63.
 * test/table-prefix.test.ts checks every name in the migrations against this limit.
 */
export const MAX_TABLE_PREFIX_LENGTH = 14;

/** The longest identifier PostgreSQL keeps whole (MariaDB allows 64). */
export const MAX_IDENTIFIER_LENGTH = 63;

const PREFIX_PATTERN = /^[a-z_][a-z0-9_]*$/;

/** A `tablePrefix` that is not a short, lower-case identifier prefix; nothing was created. */
export class TablePrefixError extends ConfigurationError {
  constructor(
    readonly prefix: unknown,
    what = "tablePrefix",
  ) {
    super(
      `${what} must be 1 to ${MAX_TABLE_PREFIX_LENGTH} characters of lower-case letters, digits and _, ` +
        `not starting with a digit (such as "billing_q_"), got ${shown(prefix)}`,
    );
  }
}

/** `value` if it is an acceptable table prefix, else a {@link TablePrefixError} naming `what`. */
export function checkTablePrefix(value: unknown, what = "tablePrefix"): string {
  if (typeof value !== "string" || value.length > MAX_TABLE_PREFIX_LENGTH || !PREFIX_PATTERN.test(value)) {
    throw new TablePrefixError(value, what);
  }
  return value;
}

const WRITTEN = /firm_queue_/g;

/**
 * The one place that maps the names firm-queue's code is written with (`firm_queue_jobs`,
 * `index_firm_queue_poll_all`, `firm_queue_notify_ready`, channel `firm_queue_ready`) to the
 * names in a database set up with `prefix`. Queries are written with the default names and
 * rewritten on the way out: {@link TableNames.apply} adds a Kysely plugin that does it for every
 * query (built or raw `sql`), and {@link TableNames.sql} does it for SQL text that never passes
 * through Kysely (the `--print-sql` script). With the default prefix nothing is rewritten and no
 * plugin is added.
 */
export class TableNames {
  readonly prefix: string;
  readonly isDefault: boolean;
  private readonly plugin: TablePrefixPlugin | undefined;

  constructor(prefix: string = DEFAULT_TABLE_PREFIX) {
    this.prefix = checkTablePrefix(prefix);
    this.isDefault = prefix === DEFAULT_TABLE_PREFIX;
    this.plugin = this.isDefault ? undefined : new TablePrefixPlugin((text) => this.sql(text));
  }

  /** `text` (SQL, or one name) with every `firm_queue_` replaced by this prefix. */
  sql(text: string): string {
    return this.isDefault || !text.includes(DEFAULT_TABLE_PREFIX) ? text : text.replace(WRITTEN, this.prefix);
  }

  /** The PostgreSQL channel migration 004's trigger notifies on. */
  get readyChannel(): string {
    return this.sql("firm_queue_ready");
  }

  /** The PostgreSQL channel migration 011's triggers send the ids of awaited jobs that ended on. */
  get endedChannel(): string {
    return this.sql("firm_queue_job_ended");
  }

  /** A unique index as this database names it (violations report the real names). */
  uniqueIndex(index: UniqueIndex): UniqueIndex {
    if (this.isDefault) return index;
    return { name: this.sql(index.name), table: this.sql(index.table), columns: index.columns };
  }

  /** `db` with every query it runs rewritten to this prefix (`db` itself for the default). */
  apply<DB>(db: Kysely<DB>): Kysely<DB> {
    return this.plugin === undefined ? db : db.withPlugin(this.plugin);
  }
}

/** The names of a database using the default prefix. */
export const DEFAULT_TABLE_NAMES = new TableNames();
