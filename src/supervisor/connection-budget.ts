import type { ResolvedStartOptions } from "./settings.js";
import type { RoleSpec } from "./role-table.js";

/**
 * How many database connections each firm-queue process may open, derived from what it runs.
 * Pools open connections on demand, so these are ceilings: a quiet process holds fewer.
 *
 * - a supervisor: 2 (its heartbeat and its pruning pass);
 * - a worker: 3 + ceil(concurrency / 4): its claim loop, its finish batcher and its heartbeat each
 *   hold one connection at a time; failed attempts (written one by one) and the jobs' own queries
 *   through the same FirmQueue share one connection per four jobs running, since a job spends
 *   most of its time in its handler, not in firm-queue's writes;
 * - a dispatcher: 3 (dispatching, concurrency maintenance or cleanup, heartbeat);
 * - a scheduler: 2 (ticks, heartbeat);
 * - a process that never starts roles (an app that only enqueues): {@link ENQUEUER_POOL_SIZE}.
 *
 * In async mode every role shares one pool: the sum of the above. On PostgreSQL each process
 * running workers also keeps one LISTEN connection outside its pool. The `poolSize` option, when
 * given, replaces the derived size for every process.
 */
export const SUPERVISOR_POOL_SIZE = 2;
/** A dispatcher's pool (see above). */
export const DISPATCHER_POOL_SIZE = 3;
/** A scheduler's pool (see above). */
export const SCHEDULER_POOL_SIZE = 2;
/** The pool of a process that only enqueues (see above). */
export const ENQUEUER_POOL_SIZE = 10;

/** The pool a worker running `concurrency` jobs at once needs. */
export function workerPoolSize(concurrency: number): number {
  return 3 + Math.ceil(concurrency / 4);
}

/** The pool one role needs in a process of its own. */
export function rolePoolSize(spec: RoleSpec): number {
  switch (spec.role) {
    case "worker":
      return workerPoolSize(spec.settings.concurrency);
    case "dispatcher":
      return DISPATCHER_POOL_SIZE;
    case "scheduler":
      return SCHEDULER_POOL_SIZE;
  }
}

/** One process of a started configuration and the connections it may hold. */
export interface ProcessBudget {
  /** "supervisor", "worker 1 (1 of 2)", "dispatcher 1", "scheduler", or "all roles" in async mode. */
  readonly label: string;
  readonly pool: number;
  /** 1 when it keeps a LISTEN connection beside the pool. */
  readonly listener: number;
}

/** Every process one `start` (one host) runs, and the sum of their connections. */
export interface ConnectionBudget {
  readonly processes: readonly ProcessBudget[];
  readonly total: number;
}

/**
 * The connections one host running `start` with these settings may open. `explicitPoolSize` is
 * the `poolSize` option (null when derived); `listens` whether the database has LISTEN/NOTIFY.
 */
export function connectionBudget(
  start: ResolvedStartOptions,
  roles: readonly RoleSpec[],
  explicitPoolSize: number | null,
  listens: boolean,
): ConnectionBudget {
  const listenerFor = (runsWorkers: boolean) => (listens && runsWorkers ? 1 : 0);
  let processes: ProcessBudget[];
  if (start.mode === "async") {
    const pool = explicitPoolSize ?? roles.reduce((sum, spec) => sum + rolePoolSize(spec), SUPERVISOR_POOL_SIZE);
    processes = [
      { label: "all roles (async mode)", pool, listener: listenerFor(roles.some((spec) => spec.role === "worker")) },
    ];
  } else {
    const counts = new Map<string, number>();
    processes = [{ label: "supervisor", pool: explicitPoolSize ?? SUPERVISOR_POOL_SIZE, listener: 0 }];
    for (const spec of roles) {
      const seen = (counts.get(spec.role) ?? 0) + 1;
      counts.set(spec.role, seen);
      processes.push({
        label: `${spec.role} ${seen}`,
        pool: explicitPoolSize ?? rolePoolSize(spec),
        listener: listenerFor(spec.role === "worker"),
      });
    }
  }
  return { processes, total: processes.reduce((sum, process) => sum + process.pool + process.listener, 0) };
}
