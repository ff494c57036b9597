import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as firmQueue from "../src/index.js";

const root = join(import.meta.dirname, "..");

/** Names ending in Error or Signal that are not firm-queue's: the platform's, a library's, an example app's. */
const FOREIGN = new Set([
  "Error",
  "TypeError",
  "RangeError",
  "AbortSignal",
  "NonError", // the name a thrown non-Error is stored under, no class
  "SmtpError", // an application's error in a log example
  "InvalidArgumentError", // commander's, inside the CLI
  "AssertionError", // node:assert's, which firm-queue/testing's assertions throw
  "JobsReadySignal", // no error: the wake-up signal docs/internals.md describes
]);

/** Error classes users never meet: each stays inside firm-queue, for the reason given. */
const INTERNAL = new Set([
  "PageError", // the dashboard turns it into an HTTP status; it never leaves the dashboard
  "UsageError", // the CLI's own: it exits with status 2 for it; no library call throws it
]);

function markdownFiles(): string[] {
  const docs = readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => join(root, "docs", name));
  return [join(root, "README.md"), join(root, "DEVELOPERS.md"), ...docs];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => join(entry.parentPath, entry.name));
}

const exported = firmQueue as Record<string, unknown>;

function isExportedErrorClass(name: string): boolean {
  const value = exported[name];
  return typeof value === "function" && value.prototype instanceof Error;
}

describe("every error class a user can meet is exported", () => {
  it("each Error or Signal the docs name is an exported class (for instanceof)", () => {
    const named = new Set<string>();
    for (const file of markdownFiles()) {
      for (const match of readFileSync(file, "utf8").matchAll(/\b[A-Z][A-Za-z]*(?:Error|Signal)\b/g)) {
        if (!FOREIGN.has(match[0])) named.add(match[0]);
      }
    }
    // The scan finds what it should: the docs name these three.
    expect(named).toContain("SchemaOutOfDateError");
    expect(named).toContain("TablePrefixError");
    expect(named).toContain("ShutdownSignal");
    const missing = [...named].filter((name) => !isExportedErrorClass(name));
    expect(missing).toEqual([]);
  });

  it("each exported error class in src/ is exported by the package", () => {
    const declared = new Set<string>();
    for (const file of sourceFiles(join(root, "src"))) {
      const text = readFileSync(file, "utf8");
      for (const match of text.matchAll(/^export class (\w+) extends (\w+)/gm)) {
        const [, name, base] = match as unknown as [string, string, string];
        if (/(?:Error|Signal)$/.test(base) || base === "Error") declared.add(name);
      }
    }
    expect(declared.size).toBeGreaterThan(30);
    const missing = [...declared].filter((name) => !INTERNAL.has(name) && !isExportedErrorClass(name));
    expect(missing).toEqual([]);
  });
});
