/** How often the offset to the database's clock is measured again. */
const RESYNC_MS = 60_000;

/**
 * The database server's clock, as seen from this process. Rows written by different processes
 * (heartbeats, scheduled times, semaphore expiry, finished times) are compared with each other,
 * so their times must come from one clock: the database's, not each host's. Reading the database
 * time for every write would cost a round trip, so the offset between the two clocks is measured
 * once when the pool opens and again every minute in the background, and {@link now} adds it to
 * this host's clock. A host clock minutes off (or stepped) is thus corrected within a minute.
 */
export class DatabaseClock {
  private offset = 0;
  /** Time added by {@link advance} (firm-queue/testing), on top of the measured offset. */
  private advanced = 0;
  private syncedAt = -Infinity;
  private syncing: Promise<void> | undefined;

  constructor(private readonly readDatabaseTime: () => Promise<Date>) {}

  /** The database's time now. Starts a background re-measure when the last one is old. */
  now(): Date {
    if (performance.now() - this.syncedAt > RESYNC_MS) void this.sync().catch(() => undefined);
    return new Date(Date.now() + this.offset + this.advanced);
  }

  /**
   * Move this clock `ms` forward for good, for every reader of this database in this process: what
   * firm-queue/testing's `advance()` does, so scheduled jobs, retries and recurring ticks come
   * due without waiting. Never used outside tests.
   */
  advance(ms: number): void {
    this.advanced += ms;
  }

  /** The offset (database minus host) in ms, as last measured. */
  get offsetMs(): number {
    return this.offset;
  }

  /**
   * Measure the offset: the database's time against the middle of the round trip. A failed
   * read keeps the last offset (and is retried at the next `now()` after the resync delay).
   */
  sync(): Promise<void> {
    return (this.syncing ??= (async () => {
      try {
        const before = Date.now();
        const databaseTime = (await this.readDatabaseTime()).getTime();
        const after = Date.now();
        if (Number.isFinite(databaseTime)) this.offset = Math.round(databaseTime - (before + after) / 2);
      } finally {
        this.syncedAt = performance.now();
        this.syncing = undefined;
      }
    })());
  }
}
