import { Injectable } from "@nestjs/common";
import type { JobContext } from "firm-queue";
import { JobHandler } from "firm-queue/nestjs";
import { markConfirmed } from "../../../shared/app-database.mjs";
// A value import, not `import type`: Nest injects by the emitted parameter types, which a
// type-only import erases to Function.
import { AppDatabase } from "../app-database.js";

/** The job's handler is a method of a provider, so it gets the provider's dependencies. */
@Injectable()
export class OrderConfirmation {
  constructor(private readonly database: AppDatabase) {}

  @JobHandler("confirm-order", { queue: "mail" })
  async confirm(args: { orderId: string; email: string }, context: JobContext): Promise<void> {
    await markConfirmed(this.database.db, args.orderId);
    console.log(`confirmed order ${args.orderId} (job ${context.jobId})`);
  }
}
