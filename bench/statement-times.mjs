// node bench/statement-times.mjs [jobs]: one in-process SQLite worker (concurrency 24) drains a backlog while
// every better-sqlite3 statement is timed; prints the time per statement text (npm run build first).
import Database from "better-sqlite3";
const proto = Object.getPrototypeOf(new Database(":memory:").prepare("select 1"));
const times = new Map();
let on = false;
for (const m of ["run", "all", "get"]) {
  const orig = proto[m];
  proto[m] = function (...a) {
    if (!on) return orig.apply(this, a);
    const t = process.hrtime.bigint();
    try {
      return orig.apply(this, a);
    } finally {
      const k = this.source
        .replace(/\s+/g, " ")
        .replace(/\(\?(, \?)+\)/g, "(?…)")
        .replace(/(\(\?(, \?)*\), )+/g, "")
        .slice(0, 150);
      const e = times.get(k) ?? { n: 0, ns: 0n };
      e.n++;
      e.ns += process.hrtime.bigint() - t;
      times.set(k, e);
    }
  };
}
const { FirmQueue, silentLogger } = await import("firm-queue");
const { benchDatabase } = await import("./databases.mjs");
const jobs = Number(process.argv[2] ?? 20000),
  concurrency = 24;
const database = await benchDatabase("sqlite");
const firm = new FirmQueue({ databaseUrl: database.url, logger: silentLogger, poolSize: concurrency + 2 });
await firm.migrate();
let done = 0;
const noop = firm.defineJob("noop", async () => void done++);
const all = Array.from({ length: jobs }, (_, i) => ({ i }));
for (let i = 0; i < all.length; i += 1000) await noop.enqueueAll(all.slice(i, i + 1000));
on = true;
const started = performance.now();
const supervisor = await firm.start({ workers: [{ concurrency, pollingInterval: 10 }], dispatchers: [] });
while (done < jobs) await new Promise((r) => setTimeout(r, 5));
const s = (performance.now() - started) / 1000;
on = false;
await supervisor.stop();
await firm.close();
await database.cleanup();
console.log(`${(jobs / s).toFixed(0)} jobs/s, ${s.toFixed(2)} s`);
let tot = 0n;
for (const e of times.values()) tot += e.ns;
for (const [k, e] of [...times].sort((a, b) => Number(b[1].ns - a[1].ns)).slice(0, 20))
  console.log(
    `${(Number(e.ns) / 1e6).toFixed(0).padStart(6)} ms ${String(e.n).padStart(6)}x ${(Number(e.ns) / 1e3 / e.n).toFixed(1).padStart(7)} us  ${k}`,
  );
console.log(`total in statements ${(Number(tot) / 1e6).toFixed(0)} ms`);
