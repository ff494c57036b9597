import { Module } from "@nestjs/common";
import { FirmQueueModule } from "firm-queue/nestjs";
import { AppDatabase } from "./app-database.js";
import { OrderConfirmation } from "./orders/order-confirmation.js";
import { OrdersController } from "./orders/orders.controller.js";
import { OrdersService } from "./orders/orders.service.js";

@Module({
  imports: [
    // forRootAsync: the options could come from a ConfigService (inject: [ConfigService]).
    FirmQueueModule.forRootAsync({
      useFactory: () => ({
        options: { databaseUrl: process.env.DATABASE_URL },
        // Workers in this process, from the app's bootstrap to its shutdown.
        workers: { workers: [{ pollingInterval: "100ms" }] },
        // The dashboard at /jobs (loopback only without authentication options).
        dashboard: { path: "/jobs" },
      }),
    }),
  ],
  controllers: [OrdersController],
  providers: [AppDatabase, OrdersService, OrderConfirmation],
})
export class AppModule {}
