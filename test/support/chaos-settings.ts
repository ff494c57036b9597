/**
 * How big a chaos run is. The defaults fit in `npm test` (a few minutes per database); the
 * environment makes a run longer or replays one:
 *
 * | variable | default | meaning |
 * | --- | --- | --- |
 * | `FIRM_QUEUE_CHAOS_ROUNDS` | 10 | fault rounds (each: enqueue a batch, inject one fault, let it settle) |
 * | `FIRM_QUEUE_CHAOS_JOBS` | 2000 | jobs in all, spread over the rounds |
 * | `FIRM_QUEUE_CHAOS_SEED` | random | seed of the job mix and the fault schedule (printed in the report) |
 * | `FIRM_QUEUE_CHAOS_FAULTS` | all the database allows | comma-separated fault kinds to draw from, e.g. `restart-server,kill-supervisor`, to hammer one interleaving |
 */
export interface ChaosSettings {
  readonly rounds: number;
  readonly jobs: number;
  readonly seed: number;
  /** Fault kinds to draw from (null: every kind the database allows). */
  readonly faults: readonly string[] | null;
}

export function chaosSettings(env: NodeJS.ProcessEnv = process.env): ChaosSettings {
  return {
    rounds: wholeNumber(env, "FIRM_QUEUE_CHAOS_ROUNDS", 10, 1),
    jobs: wholeNumber(env, "FIRM_QUEUE_CHAOS_JOBS", 2000, 1),
    seed: wholeNumber(env, "FIRM_QUEUE_CHAOS_SEED", Math.floor(Math.random() * 2 ** 31), 0),
    faults: env.FIRM_QUEUE_CHAOS_FAULTS?.trim()
      ? env.FIRM_QUEUE_CHAOS_FAULTS.split(",").map((kind) => kind.trim())
      : null,
  };
}

function wholeNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, minimum: number): number {
  const text = env[name];
  if (text === undefined || text.trim() === "") return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < minimum)
    throw new Error(`${name} must be a whole number of at least ${minimum}, got ${JSON.stringify(text)}`);
  return value;
}

/** A small seeded generator (mulberry32): the same seed gives the same job mix and fault schedule. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  }

  /** A whole number in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** A whole number in [low, high]. */
  between(low: number, high: number): number {
    return low + this.int(high - low + 1);
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from an empty list");
    return items[this.int(items.length)]!;
  }

  shuffle<T>(items: readonly T[]): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [copy[i], copy[j]] = [copy[j]!, copy[i]!];
    }
    return copy;
  }
}
