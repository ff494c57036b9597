// node bench/profile-summary.mjs FILE.cpuprofile|FILE.heapprofile [--top 30]
//
// The functions that cost most in a profile written by bench/processing-profile.mjs: self time
// for a .cpuprofile, bytes allocated for a .heapprofile, as shares of the whole.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  options: { top: { type: "string", default: "30" } },
  allowPositionals: true,
});
const file = positionals[0];
if (file === undefined) throw new Error("usage: node bench/profile-summary.mjs FILE.cpuprofile|FILE.heapprofile");
const profile = JSON.parse(readFileSync(file, "utf8"));

/** @type {Map<string, number>} */
const costs = new Map();
const add = (callFrame, cost) => {
  const where = callFrame.url.replace(/.*node_modules\//, "").replace(/.*\/dist\//, "dist/");
  const key = `${callFrame.functionName || "(anonymous)"} ${where}${where ? `:${callFrame.lineNumber + 1}` : ""}`;
  costs.set(key, (costs.get(key) ?? 0) + cost);
};
let unit;
if (file.endsWith(".heapprofile")) {
  unit = "MB";
  const walk = (node) => {
    add(node.callFrame, node.selfSize / 1e6);
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
} else {
  unit = "ms";
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  for (const [i, id] of profile.samples.entries()) add(nodes.get(id).callFrame, (profile.timeDeltas[i] ?? 0) / 1000);
}
const total = [...costs.values()].reduce((sum, cost) => sum + cost, 0);
console.log(`total ${total.toFixed(1)} ${unit}`);
for (const [key, cost] of [...costs].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top)))
  console.log(`${((100 * cost) / total).toFixed(1).padStart(5)}%  ${cost.toFixed(1).padStart(8)} ${unit}  ${key}`);
