import { randomUUID } from "node:crypto";
import { Injectable } from "@nestjs/common";
import type { FirmQueue, JobArguments } from "firm-queue";
import { InjectFirmQueue } from "firm-queue/nestjs";
import { placeOrder } from "../../../shared/app-database.mjs";
// A value import, not `import type`: Nest injects by the emitted parameter types, which a
// type-only import erases to Function.
import { AppDatabase } from "../app-database.js";

@Injectable()
export class OrdersService {
  constructor(
    private readonly database: AppDatabase,
    @InjectFirmQueue() private readonly firm: FirmQueue,
  ) {}

  /** The order and the job that confirms it, in one transaction of the app's Kysely. */
  place(email: unknown): Promise<{ orderId: string; jobId: number } | { error: string }> {
    const confirmOrder = {
      enqueue: (args: JobArguments, options: object) => this.firm.enqueue("confirm-order", args, options),
    };
    return placeOrder(this.database.db, confirmOrder, { id: randomUUID(), email });
  }
}
