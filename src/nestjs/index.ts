// firm-queue/nestjs: the NestJS module. Needs @nestjs/common and @nestjs/core (optional peer
// dependencies of firm-queue); nothing else in firm-queue imports this entry.
export { FirmQueueModule } from "./firm-queue-module.js";
export type { FirmQueueModuleOptions, FirmQueueModuleAsyncOptions } from "./module-options.js";
export { JobHandler, InjectFirmQueue } from "./decorators.js";
export type { JobHandlerMetadata } from "./decorators.js";
export { FIRM_QUEUE, JOB_HANDLER_METADATA } from "./tokens.js";
