import type { ReadSource } from "../facade/read-routing.js";
import { html, type SafeHtml } from "./html.js";

/**
 * The header's word on where the pages read (`readUrl`): the replica and how far it trails, or
 * the primary and why (the replica down, not following, or too far behind). Nothing without a
 * `readUrl`.
 */
export function replicationBadge(source: ReadSource | null): SafeHtml | string {
  if (source === null) return "";
  if (source.readsFrom === "replica")
    return html`<span class="badge running" data-replication="replica" title="${source.readUrl}: ${source.replica?.detail ?? ""}">replica · ${lagText(source)}</span>`;
  return html`<span class="badge stale" data-replication="primary" title="${source.reason ?? ""}">primary: replica unfit</span>`;
}

/** A notice above the page when it was read from the primary because the replica was unfit. */
export function replicationNotice(source: ReadSource | null): SafeHtml | string {
  if (source === null || source.readsFrom === "replica") return "";
  return html`<p class="notice error" role="status">Read from the primary: ${source.reason ?? ""}.</p>`;
}

/** `lag 0.2 s`, `lag 3 s`, or Galera's write sets waiting; what the replica can say. */
function lagText(source: ReadSource): string {
  const replica = source.replica;
  if (!replica) return "lag unknown";
  if (replica.role === "galera-node") return `Galera, ${replica.pendingWriteSets ?? 0} write sets to apply`;
  if (replica.role === "primary") return "not a replica";
  if (replica.lagMs === null) return "lag unknown";
  return `lag ${replica.lagMs < 10_000 ? (replica.lagMs / 1000).toFixed(1) : Math.round(replica.lagMs / 1000)} s`;
}
