// node bench/processing-profile.mjs [sqlite|postgres|postgres-durable|mysql] [jobs] [concurrency] [out.cpuprofile] [prefetch]
//
// Processing only, under the V8 profiler: enqueue the jobs first (not profiled), then profile one
// in-process worker draining them, and write a .cpuprofile (open it in Chrome DevTools, or sum
// self time per function). Prints the rate of the profiled run; compare rates with `npm run bench`,
// not with this, since the profiler slows the process. An `out` ending in .heapprofile samples
// allocations instead (every object allocated during processing, garbage included; sum them per
// function, or open the file in DevTools' Memory tab).
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { FirmQueue, silentLogger } from "firm-queue";
import { startPostgres } from "../scripts/servers/postgres.mjs";
import { benchDatabase } from "./databases.mjs";

const [dialect = "sqlite", count = "20000", slots = "24", out = "processing.cpuprofile", prefetch] =
  process.argv.slice(2);
const jobs = Number(count);
const concurrency = Number(slots);
// postgres-durable: a throwaway server with durable commits, as bench/durable-path.mjs runs (its
// finish and claim batches are far bigger than on the test suite's server, which does not fsync).
const durable = dialect === "postgres-durable" ? await startPostgres({ durable: true }) : undefined;
const database = durable ? await benchDatabase("postgres", durable.url) : await benchDatabase(dialect);
try {
  const firm = new FirmQueue({ databaseUrl: database.url, logger: silentLogger, poolSize: concurrency + 2 });
  await firm.migrate();
  let done = 0;
  const noop = firm.defineJob("noop", async () => void done++);
  const all = Array.from({ length: jobs }, (_, i) => ({ i }));
  for (let i = 0; i < all.length; i += 1000) await noop.enqueueAll(all.slice(i, i + 1000));
  const session = new Session();
  session.connect();
  const heap = out.endsWith(".heapprofile");
  if (heap) {
    await session.post("HeapProfiler.enable");
    await session.post("HeapProfiler.startSampling", {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  } else {
    await session.post("Profiler.enable");
    await session.post("Profiler.start");
  }
  const started = performance.now();
  const worker = {
    concurrency,
    pollingInterval: 10,
    ...(prefetch === undefined ? {} : { prefetch: Number(prefetch) }),
  };
  const supervisor = await firm.start({ workers: [worker], dispatchers: [] });
  while (done < jobs) await new Promise((resolve) => setTimeout(resolve, 5));
  const seconds = (performance.now() - started) / 1000;
  const { profile } = await session.post(heap ? "HeapProfiler.stopSampling" : "Profiler.stop");
  writeFileSync(out, JSON.stringify(profile));
  await supervisor.stop();
  await firm.close();
  console.log(
    `${dialect}: ${jobs} jobs in ${seconds.toFixed(2)} s = ${(jobs / seconds).toFixed(0)} jobs/s (concurrency ${concurrency}, prefetch ${prefetch ?? "default"}); profile in ${out}`,
  );
} finally {
  await database.cleanup();
  await durable?.stop();
}
