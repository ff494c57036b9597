import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { importCycles, importGraph, layerOf, upwardImports } from "./support/import-graph.js";

const SRC = fileURLToPath(new URL("../src", import.meta.url));

describe("the layers of src/ (docs/architecture.md)", () => {
  const graph = importGraph(SRC);

  it("has a layer for every file", () => {
    for (const file of graph.keys()) expect(() => layerOf(file)).not.toThrow();
  });

  it("imports only downward", () => {
    expect(upwardImports(graph)).toEqual([]);
  });

  it("has no import cycles, type-only imports included", () => {
    expect(importCycles(graph).map((cycle) => cycle.join(" -> "))).toEqual([]);
  });

  it("catches an upward import and a cycle when there is one", () => {
    const broken = new Map([
      ["models/job.ts", ["roles/worker.ts"]],
      ["roles/worker.ts", ["models/job.ts"]],
    ]);
    expect(upwardImports(broken)).toEqual(["models/job.ts (models) -> roles/worker.ts (roles)"]);
    expect(importCycles(broken)).toEqual([["models/job.ts", "roles/worker.ts", "models/job.ts"]]);
  });
});
