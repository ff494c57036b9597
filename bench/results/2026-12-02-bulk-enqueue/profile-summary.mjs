// Summarize a .cpuprofile: self time per function, and inclusive time of functions matching a pattern.
import { readFileSync } from "node:fs";
const [file, pattern = "enqueue", top = "40"] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, "utf8"));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const dt = new Map();
for (let i = 0; i < p.samples.length; i++) dt.set(p.samples[i], (dt.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
const total = [...dt.values()].reduce((a, b) => a + b, 0);
const key = (n) => `${n.callFrame.functionName || "(anon)"} ${n.callFrame.url.replace(/.*\/(node_modules\/)?/, "")}:${n.callFrame.lineNumber + 1}`;
const self = new Map();
for (const [id, t] of dt) { const k = key(byId.get(id)); self.set(k, (self.get(k) ?? 0) + t); }
console.log(`total ${(total / 1000).toFixed(0)} ms`);
for (const [k, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(top))) console.log(`${(t / 1000).toFixed(1).padStart(8)} ms ${(100 * t / total).toFixed(1).padStart(5)}%  ${k}`);
// inclusive: sample counted once per distinct matching frame on its stack
const incl = new Map();
for (const [id, t] of dt) {
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) { const k = key(byId.get(cur)); if (new RegExp(pattern).test(k) && !seen.has(k)) { seen.add(k); incl.set(k, (incl.get(k) ?? 0) + t); } }
}
console.log(`--- inclusive (${pattern})`);
for (const [k, t] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`${(t / 1000).toFixed(1).padStart(8)} ms  ${k}`);
