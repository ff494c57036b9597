import type { Db, Dialect } from "../database/dialect.js";
import { type BudgetRow, lockOpenQueueBudgets, queueBudgetsOf, setBudgetAvailableAt } from "../models/rate-budget.js";
import { windowUse } from "../models/rate-start.js";

/** One limited queue in a budget claim. */
interface QueueRoom {
  /** The queue's budget, when this claim holds its lock and it is open now; else null (no room). */
  readonly budget: BudgetRow | null;
  /** Starts counted in its window before this claim. */
  readonly used: number;
  /** The oldest start in its window (null: none). */
  readonly oldest: Date | null;
  /** Starts of this claim charged to it so far. */
  taken: number;
  /** When it opens, if it has no room now and that is known (full or closed until then). */
  readonly opensAt: Date | null;
}

/**
 * The room the limited queues of a worker's scope have in one budget claim. Every job of such a
 * queue charges its queue's budget, whether it waits in the ready table (the queue's own jobs) or
 * for a budget of its own (a job with its own rate limit obeys both): a queue whose budget is
 * full, closed or held by another claimer has no room, and the jobs of the others take from it
 * one by one. Built inside the claim transaction; the queue budgets stay locked until it commits.
 */
export class QueueRooms {
  private constructor(
    private readonly rooms: Map<string, QueueRoom>,
    /** The claim's time: its windows end there, and its starts are charged there. */
    readonly now: Date,
  ) {}

  /**
   * Lock the open budgets of `queues` (skipping those another claimer holds) and count their
   * windows, ending at the database clock's time read once they are locked: {@link now}, the
   * claim's time (the caller has locked its job budgets before).
   */
  static async open(trx: Db, dialect: Dialect, queues: readonly string[], clock: () => Date): Promise<QueueRooms> {
    const rooms = new Map<string, QueueRoom>();
    if (queues.length === 0) return new QueueRooms(rooms, clock());
    const all = await queueBudgetsOf(trx, queues);
    const lockedRows = await lockOpenQueueBudgets(trx, dialect, queues, clock());
    const locked = new Map(lockedRows.map((row) => [row.queueName!, row]));
    const now = clock();
    for (const known of all) {
      const queue = known.queueName!;
      const budget = locked.get(queue) ?? null;
      const closed = budget?.closedUntil !== null && budget?.closedUntil !== undefined && budget.closedUntil > now;
      if (budget === null || closed) {
        // Full or closed (its time says until when), or another claimer holds it (unknown).
        const until = closed
          ? budget!.closedUntil
          : known.availableAt !== null && known.availableAt > now
            ? known.availableAt
            : null;
        if (closed) await setBudgetAvailableAt(trx, known.key, until);
        rooms.set(queue, { budget: null, used: 0, oldest: null, taken: 0, opensAt: until });
        continue;
      }
      const use = await windowUse(trx, budget.key, new Date(now.getTime() - budget.periodMs));
      rooms.set(queue, { budget, used: use.used, oldest: use.oldest, taken: 0, opensAt: null });
    }
    return new QueueRooms(rooms, now);
  }

  /** The locked, open queue budgets, whose own ready jobs this claim may take. */
  get openBudgets(): BudgetRow[] {
    return [...this.rooms.values()].flatMap((room) => (room.budget === null ? [] : [room.budget]));
  }

  /** How many more jobs of `queue` may start in this claim (Infinity for a queue without a limit). */
  free(queue: string): number {
    const room = this.rooms.get(queue);
    if (room === undefined) return Number.POSITIVE_INFINITY;
    if (room.budget === null) return 0;
    return Math.max(0, room.budget.limit - room.used - room.taken);
  }

  /** Charge one start of `queue`, if it has room; false when it has none. */
  take(queue: string): boolean {
    if (this.free(queue) <= 0) return false;
    const room = this.rooms.get(queue);
    if (room !== undefined) room.taken++;
    return true;
  }

  /** The limited queues with no room left in this claim. */
  full(): string[] {
    return [...this.rooms.keys()].filter((queue) => this.free(queue) === 0);
  }

  /**
   * The earliest time a queue without room opens again; null when one of them may open at any
   * moment (another claimer holds it) or none is full.
   */
  reopening(): Date | null {
    let earliest: Date | null = null;
    for (const queue of this.full()) {
      const room = this.rooms.get(queue)!;
      const at = room.budget === null ? room.opensAt : this.opensAt(room);
      if (at === null) return null;
      if (earliest === null || at < earliest) earliest = at;
    }
    return earliest;
  }

  /** What this claim started per queue budget: the start-log rows to write. */
  charges(): { key: string; count: number }[] {
    return [...this.rooms.values()].flatMap((room) =>
      room.budget !== null && room.taken > 0 ? [{ key: room.budget.key, count: room.taken }] : [],
    );
  }

  /** Record on each locked queue budget whether it is full, and until when (null: it has room). */
  async settle(trx: Db): Promise<void> {
    for (const room of this.rooms.values()) {
      if (room.budget === null) continue;
      await setBudgetAvailableAt(trx, room.budget.key, this.opensAt(room));
    }
  }

  /** When a locked budget's window frees its first start, if this claim leaves it full. */
  private opensAt(room: QueueRoom): Date | null {
    if (room.budget === null || room.used + room.taken < room.budget.limit) return null;
    // The oldest start in the window leaves first: that one, or (none before) this claim's.
    const oldest = room.oldest ?? this.now;
    return new Date(oldest.getTime() + room.budget.periodMs);
  }
}
