/**
 * firm-queue/testing: test the code that enqueues jobs, and the handlers, without running
 * workers. See docs/testing-apps.md.
 */
export {
  createTestQueue,
  TestQueue,
  type AnyEnqueuedFilter,
  type ArgumentsPattern,
  type EnqueuedFilter,
  type RunAllOptions,
  type TestQueueOptions,
} from "./test-queue.js";
export { performJob, type PerformedJob, type PerformJobOptions } from "./perform-job.js";
export { matches } from "./matching.js";
export type { WaitingJob } from "../models/waiting-jobs.js";
