import { openDatabase, type Database } from "../database/connection.js";
import type { ReplicaState } from "../database/replica-state.js";
import { ClosedError, ReadUrlError, redactUrl } from "../errors.js";
import type { ResolvedOptions } from "./options.js";

/** How long one look at the replica's state stands: every read within it goes the same way. */
const STATE_TTL_MS = 2000;
/** A replica that does not answer this fast is taken as unreachable for this look. */
const CHECK_TIMEOUT_MS = 3000;
/** Connections to the replica: the dashboard's page reads, a few at once. */
const REPLICA_POOL_SIZE = 3;

/** Where `firm.inspect` reads now, and why: `firm.inspect.replication()`. */
export interface ReadSource {
  /** `replica`: reads go to `readUrl`; `primary`: they go to the database, see `reason`. */
  readonly readsFrom: "replica" | "primary";
  /** The `readUrl`, any password hidden. */
  readonly readUrl: string;
  /** What the replica said about itself; null when it did not answer (see `reason`). */
  readonly replica: ReplicaState | null;
  /** Why reads go to the primary; null when they go to the replica. */
  readonly reason: string | null;
  /** When the replica was asked, by this process's clock. */
  readonly checkedAt: Date;
}

/**
 * Sends `firm.inspect`'s reads to the `readUrl` replica while it follows its primary within
 * `readMaxLag`, and to the primary otherwise: a dashboard that goes blank or shows minutes-old
 * queues when the replica fails is worse than one that loads the primary a little more, and
 * `replication()` tells the operator which one answered. The replica's state is looked at once per
 * couple of seconds, however many reads there are.
 */
export class ReadRouting {
  private opening: Promise<Database> | undefined;
  private looking: { readonly at: number; readonly source: Promise<ReadSource> } | undefined;
  private closed = false;
  private handleChecked = false;

  constructor(
    private readonly options: ResolvedOptions,
    private readonly primary: () => Promise<Database>,
  ) {}

  /** The database a read goes to now: the replica, or the primary (always, without `readUrl`). */
  async database(): Promise<Database> {
    const source = await this.source();
    if (source?.readsFrom === "replica") return this.replica();
    return this.primary();
  }

  /** Where reads go now and what the replica said; null without `readUrl`. */
  async source(): Promise<ReadSource | null> {
    if (this.options.readUrl === undefined) return null;
    const now = Date.now();
    if (!this.looking || now - this.looking.at >= STATE_TTL_MS)
      this.looking = { at: now, source: this.look(this.options.readUrl) };
    return this.looking.source;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.opening) await (await this.opening.catch(() => undefined))?.close();
  }

  private async look(readUrl: string): Promise<ReadSource> {
    const shown = redactUrl(readUrl);
    const checkedAt = new Date();
    let replica: ReplicaState | typeof NO_ANSWER;
    try {
      replica = await withinMs(this.state(), CHECK_TIMEOUT_MS);
    } catch (error) {
      if (error instanceof ReadUrlError) throw error;
      const reason = `the replica did not answer: ${(error as Error).message}`;
      return { readsFrom: "primary", readUrl: shown, replica: null, reason, checkedAt };
    }
    if (replica === NO_ANSWER) {
      const reason = `the replica did not answer: no answer within ${CHECK_TIMEOUT_MS} ms`;
      return { readsFrom: "primary", readUrl: shown, replica: null, reason, checkedAt };
    }
    const limit = this.options.readMaxLag;
    const reason = !replica.following
      ? `the replica is not following its primary (${replica.detail})`
      : replica.lagMs !== null && replica.lagMs > limit
        ? `the replica is ${replica.lagMs} ms behind, more than readMaxLag (${limit} ms)`
        : null;
    return { readsFrom: reason === null ? "replica" : "primary", readUrl: shown, replica, reason, checkedAt };
  }

  private async state(): Promise<ReplicaState> {
    const replica = await this.replica();
    // A URL as the primary was checked with the options; a handle is checked once both are open.
    if (this.options.database !== undefined && !this.handleChecked) {
      const primary = await this.primary();
      if (replica.dialect.name !== primary.dialect.name)
        throw new ReadUrlError(replica.displayUrl, { primary: primary.dialect.name, replica: replica.dialect.name });
      this.handleChecked = true;
    }
    if (!replica.adapter.replicaState) throw new ReadUrlError(replica.displayUrl, "sqlite");
    return replica.adapter.replicaState(replica.db);
  }

  private async replica(): Promise<Database> {
    if (this.closed) throw new ClosedError("database");
    const { readUrl, schema, tablePrefix, queryTimeout } = this.options;
    this.opening ??= openDatabase(readUrl!, {
      poolSize: REPLICA_POOL_SIZE,
      queryTimeout,
      connectTimeout: CHECK_TIMEOUT_MS,
      schema,
      tablePrefix,
    });
    try {
      return await this.opening;
    } catch (error) {
      // The replica may come up later: the next look opens it again.
      this.opening = undefined;
      throw error;
    }
  }
}

/** What `withinMs` resolves with when the work took longer than its bound. */
const NO_ANSWER = Symbol("no answer");

function withinMs<T>(work: Promise<T>, ms: number): Promise<T | typeof NO_ANSWER> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof NO_ANSWER>((resolve) => {
    timer = setTimeout(() => resolve(NO_ANSWER), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
