// node cleanup-ab.mjs --a-lib X --a-url U --b-lib Y --b-url V [--batches 40] [--size 500]
// The finished-job cleanup's batch (select up to --size ids finished over 12 h ago, delete them and their
// batch memberships), one claim transaction each, alternating A and B batch by batch. Prints ms per batch.
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
const { values } = parseArgs({ options: { "a-lib": { type: "string" }, "a-url": { type: "string" }, "b-lib": { type: "string" },
  "b-url": { type: "string" }, batches: { type: "string", default: "40" }, size: { type: "string", default: "500" } } });
async function side(lib, url) {
  const { FirmQueue, silentLogger } = await import(lib);
  const { deleteFinishedJobsBatch } = await import(new URL("./models/finished-jobs.js", `file://${lib}`).href);
  const firm = new FirmQueue({ databaseUrl: url, logger: silentLogger });
  const database = await firm.database();
  const cutoff = new Date(Date.now() - 12 * 3_600_000);
  return { firm, times: [], deleted: 0,
    batch: () => database.claimTransaction((trx) => deleteFinishedJobsBatch(trx, database.dialect, { cutoff }, Number(values.size))) };
}
const sides = [await side(values["a-lib"], values["a-url"]), await side(values["b-lib"], values["b-url"])];
const loads = [];
for (let i = 0; i < Number(values.batches); i++) {
  loads.push(loadavg()[0]);
  for (const s of i % 2 ? [...sides].reverse() : sides) {
    const t = performance.now(); s.deleted += await s.batch(); s.times.push(performance.now() - t);
  }
}
const median = (xs) => { const v = [...xs].sort((x, y) => x - y); return v[Math.floor(v.length / 2)]; };
console.log(`${values.batches} batches of ${values.size} each side, alternating; 1-min load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`);
for (const [name, s] of [["A", sides[0]], ["B", sides[1]]])
  console.log(`${name}: deleted ${s.deleted}, median ${median(s.times).toFixed(1)} ms/batch, p90 ${[...s.times].sort((x, y) => x - y)[Math.floor(s.times.length * 0.9)].toFixed(1)} ms, max ${Math.max(...s.times).toFixed(1)} ms`);
console.log(`B / A median: ${(median(sides[1].times) / median(sides[0].times)).toFixed(2)}`);
for (const s of sides) await s.firm.close();
