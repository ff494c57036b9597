import { connectionBudget } from "../supervisor/connection-budget.js";
import { keepsListenConnection } from "../database/connection.js";
import type { FirmQueue } from "../firm-queue.js";
import { planRoles } from "../supervisor/role-table.js";
import type { RecurringTask } from "../definitions/recurring-task.js";
import type { CliConfig } from "./config.js";

/**
 * `firm-queue check`'s connection lines: the connections one host running this configuration
 * may open (per process and in all), times `hosts`, against the server's `max_connections` when
 * the database answers. Returns the lines and whether the budget exceeds the server's limit.
 */
export async function describeConnections(
  config: CliConfig,
  firm: FirmQueue,
  recurring: readonly RecurringTask[],
  hosts: number,
): Promise<{ lines: string[]; exceeds: boolean }> {
  const roles = planRoles(config.start, recurring);
  const listens = await keepsListenConnection(firm.options.databaseUrl);
  const budget = connectionBudget(config.start, roles, firm.options.poolSize, listens);
  const parts = budget.processes.map(
    (process) => `${process.label} ${process.pool}${process.listener ? `+${process.listener} listen` : ""}`,
  );
  const all = budget.total * hosts;
  const lines = [
    `connections:  at most ${budget.total} per host (${parts.join(", ")}; pool sizes ${firm.options.poolSize === null ? "derived from the roles" : "fixed by poolSize"})` +
      (hosts > 1 ? `; ${all} for ${hosts} hosts` : ""),
  ];
  let exceeds = false;
  try {
    const database = await firm.database();
    const limit = await database.adapter.connectionLimit?.(database.db);
    if (limit) {
      lines.push(
        `server:       ${limit.max} connections allowed (max_connections, less reserved), ${limit.inUse} open now`,
      );
      if (all > limit.max) {
        exceeds = true;
        lines.push(
          `WARNING:      ${hosts} host(s) of this configuration may open ${all} connections, more than the server's ${limit.max}: ` +
            "lower concurrency or processes, set poolSize, raise max_connections, or put a pooler in front (docs/scaling.md)",
        );
      }
    }
  } catch (error) {
    lines.push(`server:       limit unknown (the database did not answer: ${(error as Error).message})`);
  }
  return { lines, exceeds };
}
