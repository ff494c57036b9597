import { openDatabase, type Database } from "../database/connection.js";
import { openDatabaseHandle } from "../database/open-handle.js";
import { ClosedError } from "../errors.js";
import { ENQUEUER_POOL_SIZE } from "../supervisor/connection-budget.js";
import type { ResolvedOptions } from "./options.js";

/**
 * The one database of a FirmQueue instance, opened on first use from the URL or the
 * application's own handle, and closed once with the instance.
 */
export class InstanceDatabase {
  private opening: Promise<Database> | undefined;
  private closed = false;

  constructor(private readonly options: ResolvedOptions) {}

  /**
   * The open database. `poolSize`: the connections the caller's work needs (see
   * connection-budget.ts); the pool grows to it unless the `poolSize` option fixes it.
   */
  async get(poolSize?: number): Promise<Database> {
    if (this.closed) throw new ClosedError("database");
    const { database, listenUrl, schema, tablePrefix } = this.options;
    const fixed = this.options.poolSize;
    this.opening ??=
      database === undefined
        ? openDatabase(this.options.databaseUrl, {
            poolSize: fixed ?? poolSize ?? ENQUEUER_POOL_SIZE,
            listenUrl,
            queryTimeout: this.options.queryTimeout,
            schema,
            tablePrefix,
          })
        : openDatabaseHandle(database, {
            tablePrefix,
            ...(listenUrl === undefined ? {} : { listenUrl }),
            ...(schema === undefined ? {} : { schema }),
          });
    try {
      const opened = await this.opening;
      if (fixed === null && poolSize !== undefined) opened.ensurePoolSize(poolSize);
      return opened;
    } catch (error) {
      // Let a later call try again (the server may come up); keep reporting this failure now.
      this.opening = undefined;
      throw error;
    }
  }

  /** Refuse further use and close the pool if it was opened. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.opening) await (await this.opening.catch(() => undefined))?.close();
  }
}
