import { FirmQueueError } from "../errors.js";

/**
 * The database lacks migrations this build of firm-queue needs: found by the check at start
 * (`pending` lists the versions), or by a statement that met a missing table (`missingTable`
 * names it; `pending` is then empty, as nothing was read to list them). The driver's own error
 * is the `cause`.
 */
export class SchemaOutOfDateError extends FirmQueueError {
  constructor(
    readonly pending: readonly string[],
    /** The firm-queue table a statement found missing, when that is how the gap showed. */
    readonly missingTable?: string,
    options?: { cause?: unknown },
  ) {
    super(
      `${missingTable === undefined ? `The database lacks firm-queue migration(s) ${pending.join(", ")}` : `The database has no table ${missingTable}: firm-queue's migrations have not been applied`}: ` +
        `run "firm-queue migrate" (or firm.migrate()), or apply the SQL of "firm-queue migrate --print-sql" with your migration tool`,
      options,
    );
  }
}
