// node summarize.mjs FILE…: median per build of nodeCpuMsPer1000, serverCpuMsPer1000 and jobsPerSecond
// over the rounds after the first (the first run of each build in a process pays its JIT warm-up).
import { readFileSync } from "node:fs";
const runs = process.argv.slice(2).flatMap((file) =>
  readFileSync(file, "utf8").split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line)),
);
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const libs = [...new Set(runs.map((run) => run.lib))];
console.log("build | rounds | node CPU ms/1000 | server CPU ms/1000 | jobs/s");
for (const lib of libs) {
  const mine = runs.filter((run) => run.lib === lib && run.round > 1);
  const pick = (key) => median(mine.map((run) => run[key]));
  console.log(`${lib} | ${mine.length} | ${pick("nodeCpuMsPer1000")} | ${pick("serverCpuMsPer1000")} | ${pick("jobsPerSecond")}`);
}

// Paired: each later build against the first, round by round (same server, same minute).
const [first, ...others] = libs;
for (const lib of others) {
  for (const key of ["nodeCpuMsPer1000", "serverCpuMsPer1000", "jobsPerSecond"]) {
    const ratios = [];
    for (const round of new Set(runs.map((run) => run.round))) {
      if (round === 1) continue;
      const a = runs.find((run) => run.lib === first && run.round === round);
      const b = runs.find((run) => run.lib === lib && run.round === round);
      if (a && b) ratios.push(b[key] / a[key]);
    }
    const sorted = ratios.sort((x, y) => x - y);
    const below = ratios.filter((ratio) => ratio < 1).length;
    console.log(
      `${lib} / first, ${key}: median ${median(ratios).toFixed(2)} (${sorted[0].toFixed(2)}–${sorted.at(-1).toFixed(2)}), below 1 in ${below} of ${ratios.length} rounds`,
    );
  }
}
