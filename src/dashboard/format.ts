import { html, type SafeHtml } from "./html.js";

/**
 * Job arguments as readable text: JSON-like, indented, with `Date` and `bigint` shown as such
 * (`Date(2026-01-02T03:04:05.000Z)`, `10n`) instead of their stored tagged form.
 */
export function prettyValue(value: unknown, indent = ""): string {
  if (value === null) return "null";
  if (value instanceof Date) return `Date(${Number.isNaN(value.getTime()) ? "invalid" : value.toISOString()})`;
  switch (typeof value) {
    case "bigint":
      return `${value}n`;
    case "string":
      return JSON.stringify(value);
    case "number":
    case "boolean":
      return String(value);
    case "undefined":
      return "undefined";
    case "object":
      break;
    default:
      return String(value);
  }
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[\n${value.map((item) => inner + prettyValue(item, inner)).join(",\n")}\n${indent}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return "{}";
  return `{\n${entries.map(([key, item]) => `${inner}${JSON.stringify(key)}: ${prettyValue(item, inner)}`).join(",\n")}\n${indent}}`;
}

/** Arguments on one line, cut to `max` characters, for tables. */
export function shortValue(value: unknown, max = 80): string {
  const text = prettyValue(value).replace(/\s*\n\s*/g, " ");
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A time as `2026-12-01 16:50:12 UTC`. */
export function utc(date: Date): string {
  return `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** A span of milliseconds in words: `850 ms`, `42 s`, `3 min`, `5 h`, `2 d`. */
export function duration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(abs)} ms`;
  if (abs < 60_000) return `${Math.round(abs / 1000)} s`;
  if (abs < 3_600_000) return `${Math.round(abs / 60_000)} min`;
  if (abs < 86_400_000) return `${Math.round(abs / 3_600_000)} h`;
  return `${Math.round(abs / 86_400_000)} d`;
}

/** A `<time>` element showing the UTC time and how long ago (or from now) it is. */
export function timeAgo(date: Date | null, now: Date): SafeHtml {
  if (!date) return html`<span class="muted">—</span>`;
  const delta = now.getTime() - date.getTime();
  const words = delta >= 0 ? `${duration(delta)} ago` : `in ${duration(delta)}`;
  return html`<time datetime="${date.toISOString()}" title="${utc(date)}">${words}</time>`;
}

/** A number with thousands separators. */
export function count(value: number): string {
  return value.toLocaleString("en-US");
}

/** Text cut to `max` characters. */
export function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
