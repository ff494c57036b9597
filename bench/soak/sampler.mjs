// Preloaded (`node --import`) into the soak's supervisor, its fork-mode children (they inherit the
// flags) and its dashboard process: appends one JSON line of this process's memory to the file
// named by FIRM_QUEUE_SOAK_SAMPLES every FIRM_QUEUE_SOAK_SAMPLE_MS. When the process runs with
// --expose-gc (the soak starts them so), each line also holds the heap and RSS right after a
// forced full collection: what is still alive, which is what a leak makes grow, as against the
// plain figures, which also count garbage not yet collected and move with the collector's pacing.
// The timer is unref'd so it never keeps a process alive. Lines are short single writes with
// O_APPEND, so processes do not interleave.
import { appendFileSync } from "node:fs";

const file = process.env.FIRM_QUEUE_SOAK_SAMPLES;
const every = Number(process.env.FIRM_QUEUE_SOAK_SAMPLE_MS ?? 10_000);
if (file) {
  const sample = () => {
    const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
    const line = { pid: process.pid, ppid: process.ppid, t: Date.now(), rss, heapUsed, heapTotal, external };
    if (typeof globalThis.gc === "function") {
      globalThis.gc();
      const after = process.memoryUsage();
      line.gcHeapUsed = after.heapUsed;
      line.gcRss = after.rss;
    }
    try {
      appendFileSync(file, `${JSON.stringify(line)}\n`);
    } catch {
      // the soak has ended and removed its directory
    }
  };
  setInterval(sample, every).unref();
  sample();
}
