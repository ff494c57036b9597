// `firm-queue start` for bench/soak.mjs: fork mode, two worker processes, a dispatcher that clears
// finished jobs often, and a scheduler with a recurring task every 5 s.
export default {
  jobs: ["./jobs.mjs"],
  mode: "fork",
  workers: [{ queues: "*", concurrency: 4, processes: 2, pollingInterval: "200ms" }],
  dispatchers: [{ pollingInterval: "500ms", clearFinishedJobsInterval: "30s" }],
  recurring: {
    "soak-every-5s": { job: "soak-tick", schedule: "*/5 * * * * *", description: "the soak's recurring task" },
  },
  processHeartbeatInterval: "10s",
  processAliveThreshold: "2m",
  shutdownTimeout: "5s",
};
