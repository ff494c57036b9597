const [a, b] = await Promise.all([import("/tmp/worker-cpu-base/dist/roles/job-context.js"), import("/work/wt/worker-cpu/dist/roles/job-context.js")]);
const job = { id: "7", class_name: "noop", queue_name: "default", priority: 0, attempts: 0, created_at: "2026-12-01T10:00:00.123Z", batch_id: null };
const logger = { debug() {}, info() {}, warn() {}, error() {} };
const p = () => {}; const s = () => new AbortController().signal; const d = async () => [];
let sink;
for (let r = 0; r < 6; r++) for (const [l, m] of [["before", a], ["after", b]]) {
  const t = performance.now();
  for (let i = 0; i < 1e6; i++) sink = m.jobContext(job, logger, p, s, d, undefined);
  console.log(l, "ns/op", (performance.now() - t).toFixed(0));
}
