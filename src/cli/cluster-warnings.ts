import type { FirmQueue } from "../firm-queue.js";

/**
 * `firm-queue check`'s lines about replication and clustering: one WARNING per server setting that
 * breaks a guarantee (docs/high-availability.md), naming the setting. Nothing when the database
 * does not answer (the connection lines say so already) or none applies.
 */
export async function describeClusterWarnings(firm: FirmQueue): Promise<string[]> {
  try {
    const database = await firm.database();
    const warnings = (await database.adapter.clusterWarnings?.(database.db)) ?? [];
    return warnings.map((warning) => `WARNING:      ${warning.setting}=${warning.message}`);
  } catch {
    return [];
  }
}
