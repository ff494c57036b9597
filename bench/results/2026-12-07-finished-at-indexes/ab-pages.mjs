// node ab-pages.mjs --a-lib X --a-url U --b-lib Y --b-url V [--rounds 15] [--full]
// Interleaved A/B of dashboard pages on two databases holding the same rows (one a copy of the other):
// each round requests every page from A then B (B then A on odd rounds). Prints per page the median of
// each side over the rounds and the ratio B/A. --full: the whole bench/dashboard.mjs page list (PostgreSQL fill).
import { createServer } from "node:http";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
const { values } = parseArgs({ options: {
  "a-lib": { type: "string" }, "a-url": { type: "string" }, "b-lib": { type: "string" }, "b-url": { type: "string" },
  rounds: { type: "string", default: "15" }, full: { type: "boolean", default: false } } });
async function side(lib, url) {
  const { FirmQueue, createDashboard, silentLogger } = await import(lib);
  const firm = new FirmQueue({ databaseUrl: url, logger: silentLogger });
  const server = createServer(createDashboard({ firm, allowUnauthenticated: true }).node);
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { firm, server, base: `http://127.0.0.1:${server.address().port}` };
}
const A = await side(values["a-lib"], values["a-url"]);
const B = await side(values["b-lib"], values["b-url"]);
const firm = A.firm;
let ready = await firm.inspect.jobs({ state: "ready", limit: 500 });
for (let page = 0; page < 40 && ready.nextCursor; page += 1) ready = await firm.inspect.jobs({ state: "ready", limit: 500, cursor: ready.nextCursor });
let finished = await firm.inspect.jobs({ state: "finished", limit: 500 });
for (let page = 0; page < 400 && finished.nextCursor; page += 1) finished = await firm.inspect.jobs({ state: "finished", limit: 500, cursor: finished.nextCursor });
const failed = (await firm.inspect.jobs({ state: "failed", limit: 1 })).jobs[0].id;
const from = new Date(Date.now() - 12 * 3_600_000), to = new Date(from.getTime() + 3_600_000);
const enc = (c) => encodeURIComponent(c ?? "");
const pages = [
  ["overview", "/"], ["queue page (ready)", "/queues/queue_3"], ["jobs: ready, first page", "/jobs?state=ready"],
  ["jobs: ready, deep page (cursor)", `/jobs?state=ready&cursor=${enc(ready.nextCursor)}`],
  ["jobs: finished, first page", "/jobs?state=finished"],
  ["jobs: finished, deep page (cursor)", `/jobs?state=finished&cursor=${enc(finished.nextCursor)}`],
  ["jobs: finished, queue + name filter", "/jobs?state=finished&queue=queue_7&name=Job7"],
  ["jobs: finished, 1-hour range 12 h ago", `/jobs?state=finished&from=${from.toISOString().slice(0, 19)}&to=${to.toISOString().slice(0, 19)}`],
  ["jobs: cancelled", "/jobs?state=cancelled"], ["jobs: cancelled, queue filter", "/jobs?state=cancelled&queue=queue_2"],
  ["failed jobs", "/failed"], ["failed jobs, queue filter", "/failed?queue=queue_4"], ["job page", `/jobs/${failed}`],
];
if (values.full) {
  const extra = [["jobs: scheduled", "/jobs?state=scheduled"], ["processes", "/processes"], ["recurring tasks", "/recurring"],
    ["concurrency", "/concurrency"], ["job page, 10,000 dependents", "/jobs/1"], ["job page, 10,000 dependencies", "/jobs/2"],
    ["batches, first page", "/batches"], ["batch page, 10,000 jobs, first page", "/batches/1"]];
  pages.push(...extra);
}
async function timed(url) {
  const start = performance.now(); const res = await fetch(url); await res.text();
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
  return performance.now() - start;
}
const times = new Map(pages.map(([name]) => [name, { a: [], b: [] }]));
for (const [, path] of pages) { await timed(A.base + path); await timed(B.base + path); } // warm-up
const loads = [];
for (let round = 0; round < Number(values.rounds); round++) {
  loads.push(loadavg()[0]);
  for (const [name, path] of pages) {
    const t = times.get(name);
    if (round % 2 === 0) { t.a.push(await timed(A.base + path)); t.b.push(await timed(B.base + path)); }
    else { t.b.push(await timed(B.base + path)); t.a.push(await timed(A.base + path)); }
  }
}
const median = (xs) => { const s = [...xs].sort((x, y) => x - y); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
console.log(`A: ${values["a-lib"]} on ${values["a-url"].replace(/\/\/[^@]*@/, "//")}\nB: ${values["b-lib"]} on ${values["b-url"].replace(/\/\/[^@]*@/, "//")}`);
console.log(`${values.rounds} interleaved rounds, node ${process.version}, 1-min load average over the rounds ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}\n`);
const quantile = (xs, q) => { const s = [...xs].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor(q * s.length))]; };
console.log("B / A of medians, and the median of the rounds' paired ratios (each round's B over its A, requested back to back) with their middle half");
console.log("| page | A median (ms) | B median (ms) | B / A | paired B / A | middle half |\n|---|---:|---:|---:|---:|---|");
for (const [name] of pages) { const t = times.get(name); const a = median(t.a), b = median(t.b);
  const ratios = t.a.map((x, i) => t.b[i] / x);
  console.log(`| ${name} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${(b / a).toFixed(2)} | ${median(ratios).toFixed(2)} | ${quantile(ratios, 0.25).toFixed(2)}-${quantile(ratios, 0.75).toFixed(2)} |`); }
for (const s of [A, B]) { s.server.close(); await s.firm.close(); }
