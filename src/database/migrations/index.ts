import { createTables } from "./001-create-tables.js";
import { addJobsLastError } from "./002-add-jobs-last-error.js";
import { recurringTaskTimezoneAndLastRun } from "./003-recurring-task-timezone-and-last-run.js";
import { notifyReadyJobs } from "./004-notify-ready-jobs.js";
import { addJobsSemaphoreId } from "./005-add-jobs-semaphore-id.js";
import { addJobsTraceContext } from "./006-add-jobs-trace-context.js";
import { addJobKeys } from "./007-job-keys.js";
import { addJobsCancelledAt } from "./008-add-jobs-cancelled-at.js";
import { addJobsResultAndProgress } from "./009-add-jobs-result-and-progress.js";
import { partialJobIndexes } from "./010-partial-job-indexes.js";
import { notifyEndedJobs } from "./011-notify-ended-jobs.js";
import { addJobDependencies } from "./012-job-dependencies.js";
import { rateLimits } from "./013-rate-limits.js";
import { addClaimsStartedAt } from "./014-add-claims-started-at.js";
import { addBatches } from "./015-batches.js";
import { claimsWithoutJobForeignKey } from "./016-claims-without-job-foreign-key.js";
import { workflowRowsFillfactor } from "./017-workflow-rows-fillfactor.js";
import { endedJobIndexes } from "./018-ended-job-indexes.js";
import { workflowStatesInPlace } from "./019-workflow-states-in-place.js";
import type { Migration } from "./table-spec.js";

/** Every migration, oldest first. Append only: a released migration is never edited. */
export const MIGRATIONS: readonly Migration[] = [
  createTables,
  addJobsLastError,
  recurringTaskTimezoneAndLastRun,
  notifyReadyJobs,
  addJobsSemaphoreId,
  addJobsTraceContext,
  addJobKeys,
  addJobsCancelledAt,
  addJobsResultAndProgress,
  partialJobIndexes,
  notifyEndedJobs,
  addJobDependencies,
  rateLimits,
  addClaimsStartedAt,
  addBatches,
  claimsWithoutJobForeignKey,
  workflowRowsFillfactor,
  endedJobIndexes,
  workflowStatesInPlace,
];
