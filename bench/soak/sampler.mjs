// Preloaded (`node --import`) into the soak's supervisor, its fork-mode children (they inherit the
// flag) and its dashboard process: appends one JSON line of this process's memory to the file
// named by FIRM_QUEUE_SOAK_SAMPLES every FIRM_QUEUE_SOAK_SAMPLE_MS. The timer is unref'd so it never
// keeps a process alive. Lines are short single writes with O_APPEND, so processes do not interleave.
import { appendFileSync } from "node:fs";

const file = process.env.FIRM_QUEUE_SOAK_SAMPLES;
const every = Number(process.env.FIRM_QUEUE_SOAK_SAMPLE_MS ?? 10_000);
if (file) {
  const sample = () => {
    const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
    const line = { pid: process.pid, ppid: process.ppid, t: Date.now(), rss, heapUsed, heapTotal, external };
    try {
      appendFileSync(file, `${JSON.stringify(line)}\n`);
    } catch {
      // the soak has ended and removed its directory
    }
  };
  setInterval(sample, every).unref();
  sample();
}
