/** The injection token of the application's FirmQueue: what {@link InjectFirmQueue} injects. */
export const FIRM_QUEUE = Symbol.for("firm-queue:FirmQueue");

/** The injection token of the module's resolved options. */
export const FIRM_QUEUE_MODULE_OPTIONS = Symbol.for("firm-queue:FirmQueueModuleOptions");

/** The metadata key {@link JobHandler} sets on a method. */
export const JOB_HANDLER_METADATA = "firm-queue:job-handler";
