import { ConfigurationError } from "../errors.js";
import type { Db } from "../database/dialect.js";
import { readyQueueNamesWithPrefix, type ClaimTarget } from "../models/ready-execution.js";
import { shown } from "../shown-value.js";

/**
 * Which queues a worker takes jobs from, and in what order.
 * - `"*"`: every queue, in one global (priority, job id) order.
 * - a list of exact names and `prefix*` patterns: polled in list order; a prefix expands to the
 *   queues that have ready jobs, in name order; a queue matched earlier is not repeated. A `*`
 *   inside a list means every queue not named before it.
 */
export class QueueSelector {
  readonly patterns: readonly string[];
  /** The `prefix*` patterns that can add queues (those before a `*`), looked up at each poll. */
  private readonly prefixes: readonly string[];
  /** The targets when there is no such prefix: the same for every poll, known without a query. */
  private readonly fixedTargets: readonly ClaimTarget[] | undefined;

  constructor(queues: string | readonly string[]) {
    this.patterns = queuePatterns(queues);
    const all = this.patterns.indexOf("*");
    this.prefixes = (all === -1 ? this.patterns : this.patterns.slice(0, all)).filter((pattern) =>
      pattern.endsWith("*"),
    );
    this.fixedTargets = this.prefixes.length > 0 ? undefined : Object.freeze(targetsOf(this.patterns, () => []));
  }

  /**
   * The claim targets to poll, in order, resolving prefixes against the ready jobs right now. Paused
   * queues are not left out here: every claim passes over them itself, so a selector of exact
   * names (the usual one) costs no query before its claims.
   */
  async targets(db: Db): Promise<readonly ClaimTarget[]> {
    if (this.fixedTargets !== undefined) return this.fixedTargets;
    const expansions = new Map<string, string[]>();
    for (const prefix of this.prefixes)
      expansions.set(prefix, await readyQueueNamesWithPrefix(db, prefix.slice(0, -1)));
    return targetsOf(this.patterns, (prefix) => expansions.get(prefix)!);
  }

  toString(): string {
    return this.patterns.join(",");
  }
}

/**
 * The targets of `patterns`, in order: an exact name is one target, a `prefix*` pattern the queues
 * `expand` gives for it (those with ready jobs), each queue once; a `*` is every queue not named
 * before it, and ends the list.
 */
function targetsOf(patterns: readonly string[], expand: (prefix: string) => readonly string[]): ClaimTarget[] {
  const seen = new Set<string>();
  const targets: ClaimTarget[] = [];
  for (const pattern of patterns) {
    if (pattern === "*") {
      targets.push({ exclude: [...seen] });
      break;
    }
    for (const name of pattern.endsWith("*") ? expand(pattern) : [pattern]) {
      if (seen.has(name)) continue;
      seen.add(name);
      targets.push({ queue: name, exclude: [] });
    }
  }
  return targets;
}

/**
 * The patterns of a `queues` option (`"a,b*"` or a list), trimmed, in order; a ConfigurationError
 * when it names no queue. Settings are checked with this before any worker starts.
 */
export function queuePatterns(queues: string | readonly string[]): readonly string[] {
  const list = typeof queues === "string" ? queues.split(",") : [...queues];
  const patterns = list.map((queue) => String(queue).trim()).filter((queue) => queue !== "");
  if (patterns.length === 0)
    throw new ConfigurationError(`queues must name at least one queue or "*", got ${shown(queues)}`);
  return Object.freeze(patterns);
}
