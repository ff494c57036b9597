import { FirmQueue, silentLogger } from "../../src/index.js";
import {
  CHAOS_QUEUES,
  KEYED_JOB,
  ON_FINISH_JOB,
  ON_SUCCESS_JOB,
  PARENT_JOB,
  PLAIN_JOB,
  RATE_BUDGETS,
  RATE_JOB,
  defineChaosJobs,
  type ChaosArgs,
} from "../fixtures/chaos-jobs.js";
import type { Random } from "./chaos-settings.js";

/** Keys the keyed jobs spread over: few enough that each key has a long line of waiting jobs. */
const KEYS = 8;

interface PlannedJob {
  readonly name: string;
  readonly args: ChaosArgs;
  readonly options: { queue?: string; priority: number; wait?: number };
}

/** A flow: a parent that runs once all its children (plain or keyed jobs) have finished. */
interface PlannedFlow {
  readonly parent: PlannedJob;
  readonly children: PlannedJob[];
}

/** A batch of plain or keyed jobs with one or both of its callbacks. */
interface PlannedBatch {
  readonly jobs: PlannedJob[];
  readonly onFinish: PlannedJob | null;
  readonly onSuccess: PlannedJob | null;
}

/** One round's share of the chaos mix. */
export interface PlannedRound {
  readonly singles: PlannedJob[];
  readonly flows: PlannedFlow[];
  readonly batches: PlannedBatch[];
}

/** A flow as written: the parent's id and its children's. */
export interface FlowShape {
  readonly parent: number;
  readonly children: readonly number[];
}

/** A batch as written: its id, its jobs' ids, and the callbacks (job names) it must enqueue once. */
export interface BatchShape {
  readonly id: number;
  readonly members: readonly number[];
  readonly callbacks: readonly string[];
}

/** What a round wrote: every job id (callbacks come later, from the batches' ends). */
export interface EnqueuedRound {
  readonly ids: number[];
  readonly flows: FlowShape[];
  readonly batches: BatchShape[];
}

/**
 * One plain or keyed job of the chaos mix: about a third keyed (limit 1 per key), the rest plain
 * over two queues; a few fail their first attempt, some are scheduled a moment ahead (so the
 * dispatcher works too), and each works for up to 25 ms.
 */
function planJob(random: Random): PlannedJob {
  const keyed = random.next() < 0.35;
  const args: ChaosArgs = {
    key: keyed ? `k${random.int(KEYS)}` : null,
    ms: random.int(26),
    failFirst: random.next() < 0.04,
  };
  const wait = random.next() < 0.1 ? random.between(100, 1500) : undefined;
  const options = {
    priority: random.int(3),
    ...(keyed ? {} : { queue: random.pick(CHAOS_QUEUES.slice(0, 2)) }),
    ...(wait ? { wait } : {}),
  };
  return { name: keyed ? KEYED_JOB : PLAIN_JOB, args, options };
}

/** A job of `name` with the plain work (its queue comes from its definition). */
function planOwnJob(random: Random, name: string, extra: Partial<ChaosArgs> = {}): PlannedJob {
  const args: ChaosArgs = { key: null, ms: random.int(26), failFirst: random.next() < 0.04, ...extra };
  return { name, args, options: { priority: random.int(3) } };
}

/** `count` plain or keyed jobs of the chaos mix (see {@link planJob}). */
export function planJobs(random: Random, count: number): PlannedJob[] {
  return Array.from({ length: count }, () => planJob(random));
}

/**
 * `count` jobs of the full chaos mix: besides plain and keyed jobs, about 5 % rate limited (over
 * two budgets), about 20 % in flows (a parent over 2 to 5 children) and about 20 % in batches of
 * 3 to 8 jobs with an `onFinish` or `onSuccess` callback or both (the callbacks are not counted:
 * they are enqueued when their batch ends).
 */
export function planRound(random: Random, count: number): PlannedRound {
  const round: { singles: PlannedJob[]; flows: PlannedFlow[]; batches: PlannedBatch[] } = {
    singles: [],
    flows: [],
    batches: [],
  };
  let left = count;
  while (left > 0) {
    const draw = random.next();
    if (draw < 0.07) {
      round.singles.push(planOwnJob(random, RATE_JOB, { budget: random.pick(RATE_BUDGETS) }));
      left -= 1;
    } else if (draw < 0.12 && left >= 3) {
      const children = Math.min(random.between(2, 5), left - 1);
      round.flows.push({ parent: planOwnJob(random, PARENT_JOB), children: planJobs(random, children) });
      left -= children + 1;
    } else if (draw < 0.17 && left >= 3) {
      const size = Math.min(random.between(3, 8), left);
      const callbacks = random.int(3); // 0: onFinish, 1: onSuccess, 2: both
      round.batches.push({
        jobs: planJobs(random, size),
        onFinish: callbacks !== 1 ? planOwnJob(random, ON_FINISH_JOB) : null,
        onSuccess: callbacks !== 0 ? planOwnJob(random, ON_SUCCESS_JOB) : null,
      });
      left -= size;
    } else {
      round.singles.push(planJob(random));
      left -= 1;
    }
  }
  return round;
}

/**
 * Enqueue `jobs` straight to the database (never through the proxy), on a connection opened for
 * this batch and closed after it, so that no connection of the test's is open when the server
 * restarts. Returns the new job ids.
 */
export async function enqueueJobs(databaseUrl: string, jobs: readonly PlannedJob[]): Promise<number[]> {
  return (await enqueueRound(databaseUrl, { singles: [...jobs], flows: [], batches: [] })).ids;
}

/** Enqueue a {@link PlannedRound} as {@link enqueueJobs} does: flows with `firm.flow`, batches with `firm.batch`. */
export async function enqueueRound(databaseUrl: string, round: PlannedRound): Promise<EnqueuedRound> {
  const firm = new FirmQueue({ databaseUrl, logger: silentLogger });
  defineChaosJobs(firm, async () => {});
  const ids: number[] = [];
  const created = (id: number | null): number => {
    if (id === null) throw new Error("a chaos job was discarded at enqueue; the keyed job blocks, it never discards");
    ids.push(id);
    return id;
  };
  try {
    for (let start = 0; start < round.singles.length; start += 25) {
      const chunk = round.singles.slice(start, start + 25);
      const enqueued = await Promise.all(chunk.map((job) => firm.enqueue(job.name, job.args, job.options)));
      for (const { id } of enqueued) created(id);
    }
    const flows = await Promise.all(
      round.flows.map(async ({ parent, children }) => {
        const tree = await firm.flow({ ...parent, children });
        return { parent: created(tree.id), children: tree.children.map((child) => created(child.id)) };
      }),
    );
    const batches = await Promise.all(
      round.batches.map(async ({ jobs, onFinish, onSuccess }) => {
        const batch = await firm.batch(jobs, {
          ...(onFinish ? { onFinish: { name: onFinish.name, args: onFinish.args } } : {}),
          ...(onSuccess ? { onSuccess: { name: onSuccess.name, args: onSuccess.args } } : {}),
        });
        const callbacks = [onFinish?.name, onSuccess?.name].filter((name) => name !== undefined);
        return { id: batch.id, members: batch.jobs.map((job) => created(job.id)), callbacks };
      }),
    );
    return { ids, flows, batches };
  } finally {
    await firm.close();
  }
}
