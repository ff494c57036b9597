/** How often the offset to the database's clock is measured again. */
const RESYNC_MS = 60_000;

/**
 * How fast two clocks may drift apart, as a fraction (100 ppm: far more than a working quartz
 * clock). It ages a kept measurement: after an hour its error bound has grown by 360 ms, so a
 * new, slower measurement then replaces it.
 */
const DRIFT = 100e-6;

/** One measurement of the offset, with how far it can be off. */
interface Measurement {
  readonly offset: number;
  /** Half the round trip: the server read its clock somewhere inside it. */
  readonly bound: number;
  /** When it was taken, on the host's monotonic clock. */
  readonly at: number;
}

/** The host's clocks, replaceable in tests. */
export interface HostClocks {
  /** Wall-clock time in ms (Date.now). */
  readonly wall: () => number;
  /** A monotonic time in ms (performance.now). */
  readonly monotonic: () => number;
}

const SYSTEM_CLOCKS: HostClocks = { wall: () => Date.now(), monotonic: () => performance.now() };

/**
 * The database server's clock, as seen from this process. Rows written by different processes
 * (heartbeats, scheduled times, semaphore expiry, finished times, rate-limit starts) are compared
 * with each other, so their times must come from one clock: the database's, not each host's.
 * Reading the database time for every write would cost a round trip, so the offset between the
 * two clocks is measured when the pool opens and again every minute in the background, and
 * {@link now} adds it to this host's clock.
 *
 * A measurement is only as good as its round trip: the server read its clock at some moment
 * between sending the query and receiving the answer, so the offset taken against the middle of
 * that round trip is off by up to half of it. On a loaded machine or network a round trip can take
 * hundreds of milliseconds, so a new measurement replaces the kept one only when it is at least as
 * precise (its half round trip no larger than the kept one's, grown by the clocks' possible drift
 * since), or when it cannot be reconciled with it (the two error ranges do not meet: the host's
 * clock was stepped). A host clock minutes off, or stepped, is thus still corrected within a
 * minute, and a slow round trip no longer moves the estimate by half its length.
 */
export class DatabaseClock {
  private kept: Measurement | undefined;
  /** Time added by {@link advance} (firm-queue/testing), on top of the measured offset. */
  private advanced = 0;
  private syncedAt = -Infinity;
  private syncing: Promise<void> | undefined;

  constructor(
    private readonly readDatabaseTime: () => Promise<Date>,
    private readonly host: HostClocks = SYSTEM_CLOCKS,
  ) {}

  /** The database's time now. Starts a background re-measure when the last one is old. */
  now(): Date {
    if (this.host.monotonic() - this.syncedAt > RESYNC_MS) void this.sync().catch(() => undefined);
    return new Date(this.host.wall() + this.offsetMs + this.advanced);
  }

  /**
   * Move this clock `ms` forward for good, for every reader of this database in this process: what
   * firm-queue/testing's `advance()` does, so scheduled jobs, retries and recurring ticks come
   * due without waiting. Never used outside tests.
   */
  advance(ms: number): void {
    this.advanced += ms;
  }

  /** The offset (database minus host) in ms, as kept. */
  get offsetMs(): number {
    return this.kept?.offset ?? 0;
  }

  /** How far the kept offset may be off, in ms (Infinity before any measurement). */
  get uncertaintyMs(): number {
    return this.kept === undefined ? Number.POSITIVE_INFINITY : this.boundNow(this.kept);
  }

  /**
   * Measure the offset: the database's time against the middle of the round trip, kept if it is
   * better than (or inconsistent with) the one held. A failed read keeps the last offset (and is
   * retried at the next `now()` after the resync delay).
   */
  sync(): Promise<void> {
    return (this.syncing ??= (async () => {
      try {
        const sentAt = this.host.monotonic();
        const before = this.host.wall();
        const databaseTime = (await this.readDatabaseTime()).getTime();
        const after = this.host.wall();
        const roundTrip = Math.max(0, this.host.monotonic() - sentAt);
        if (Number.isFinite(databaseTime)) {
          this.consider({ offset: Math.round(databaseTime - (before + after) / 2), bound: roundTrip / 2, at: sentAt });
        }
      } finally {
        this.syncedAt = this.host.monotonic();
        this.syncing = undefined;
      }
    })());
  }

  private consider(measured: Measurement): void {
    const kept = this.kept;
    if (kept === undefined) {
      this.kept = measured;
      return;
    }
    const keptBound = this.boundNow(kept);
    const moreExact = measured.bound <= keptBound;
    const irreconcilable = Math.abs(measured.offset - kept.offset) > measured.bound + keptBound;
    if (moreExact || irreconcilable) this.kept = measured;
  }

  /** A measurement's error bound now: its half round trip, plus the drift since it was taken. */
  private boundNow(measurement: Measurement): number {
    return measurement.bound + Math.max(0, this.host.monotonic() - measurement.at) * DRIFT;
  }
}
