import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/**
 * The layers of src/, top to bottom (docs/architecture.md draws them). A file may import files of
 * its own layer or of layers below it, never above. Prefixes ending in "/" name folders; other
 * entries name single files; `*.ts` at the end stands for the leaf modules at the top of src/.
 */
export const LAYERS: readonly { readonly name: string; readonly paths: readonly string[] }[] = [
  { name: "public exports", paths: ["index.ts"] },
  { name: "nestjs", paths: ["nestjs/"] },
  { name: "testing", paths: ["testing/"] },
  { name: "cli", paths: ["cli/"] },
  { name: "dashboard", paths: ["dashboard/"] },
  { name: "facade", paths: ["firm-queue.ts", "facade/"] },
  { name: "supervisor", paths: ["supervisor/"] },
  { name: "roles", paths: ["roles/"] },
  { name: "processes", paths: ["processes/"] },
  { name: "lifecycle", paths: ["lifecycle/"] },
  { name: "models", paths: ["models/"] },
  { name: "definitions", paths: ["definitions/"] },
  { name: "database", paths: ["database/"] },
  { name: "leaves", paths: ["*.ts"] },
];

/** The layer index of a file given relative to src/ (0 is the top); throws for a file no layer claims. */
export function layerOf(file: string): number {
  const index = LAYERS.findIndex(({ paths }) =>
    paths.some((path) =>
      path.endsWith("/") ? file.startsWith(path) : path === "*.ts" ? !file.includes("/") : file === path,
    ),
  );
  if (index < 0) throw new Error(`src/${file} belongs to no layer: add its folder to LAYERS and docs/architecture.md`);
  return index;
}

/** Every relative import of every .ts file under `srcDir`, type-only and dynamic ones included. */
export function importGraph(srcDir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g;
  for (const file of listTs(srcDir)) {
    const text = readFileSync(file, "utf8");
    const targets: string[] = [];
    for (const match of text.matchAll(pattern)) {
      const target = resolve(dirname(file), match[1]!).replace(/\.js$/, ".ts");
      targets.push(relative(srcDir, target).split("\\").join("/"));
    }
    graph.set(relative(srcDir, file).split("\\").join("/"), targets);
  }
  return graph;
}

/** Imports that point to a higher layer, as "importer -> imported". */
export function upwardImports(graph: Map<string, string[]>): string[] {
  const found: string[] = [];
  for (const [file, targets] of graph) {
    for (const target of targets) {
      if (layerOf(target) < layerOf(file))
        found.push(`${file} (${LAYERS[layerOf(file)]!.name}) -> ${target} (${LAYERS[layerOf(target)]!.name})`);
    }
  }
  return found;
}

/** Each import cycle once, as the list of files around it. */
export function importCycles(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, "open");
    stack.push(file);
    for (const target of graph.get(file) ?? []) {
      if (state.get(target) === "open") cycles.push([...stack.slice(stack.indexOf(target)), target]);
      else if (!state.has(target)) visit(target);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return cycles;
}

function listTs(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return listTs(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}
