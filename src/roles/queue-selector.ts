import { ConfigurationError } from "../errors.js";
import type { Db } from "../database/dialect.js";
import { pausedQueueNames } from "../models/pause.js";
import { readyQueueNamesWithPrefix, type ClaimTarget } from "../models/ready-execution.js";

/**
 * Which queues a worker takes jobs from, and in what order.
 * - `"*"`: every queue, in one global (priority, job id) order.
 * - a list of exact names and `prefix*` patterns: polled in list order; a prefix expands to the
 *   queues that have ready jobs, in name order; a queue matched earlier is not repeated. A `*`
 *   inside a list means every queue not named before it.
 */
export class QueueSelector {
  readonly patterns: readonly string[];

  constructor(queues: string | readonly string[]) {
    this.patterns = queuePatterns(queues);
  }

  /** Whether this selector is `"*"` alone: one claim query over every queue. */
  get isAll(): boolean {
    return this.patterns.length === 1 && this.patterns[0] === "*";
  }

  /** The claim targets to poll, in order, resolving prefixes against the ready jobs right now. */
  async targets(db: Db): Promise<ClaimTarget[]> {
    if (this.isAll) return [{ exclude: [] }];
    const paused = new Set(await pausedQueueNames(db));
    const seen = new Set<string>();
    const targets: ClaimTarget[] = [];
    for (const pattern of this.patterns) {
      if (pattern === "*") {
        targets.push({ exclude: [...seen] });
        break;
      }
      const names = pattern.endsWith("*") ? await readyQueueNamesWithPrefix(db, pattern.slice(0, -1)) : [pattern];
      for (const name of names) {
        if (seen.has(name)) continue;
        seen.add(name);
        if (!paused.has(name)) targets.push({ queue: name, exclude: [] });
      }
    }
    return targets;
  }

  toString(): string {
    return this.patterns.join(",");
  }
}

/**
 * The patterns of a `queues` option (`"a,b*"` or a list), trimmed, in order; a ConfigurationError
 * when it names no queue. Settings are checked with this before any worker starts.
 */
export function queuePatterns(queues: string | readonly string[]): readonly string[] {
  const list = typeof queues === "string" ? queues.split(",") : [...queues];
  const patterns = list.map((queue) => String(queue).trim()).filter((queue) => queue !== "");
  if (patterns.length === 0)
    throw new ConfigurationError(`queues must name at least one queue or "*", got ${JSON.stringify(queues)}`);
  return Object.freeze(patterns);
}
