import { Injectable, type OnApplicationShutdown, type OnModuleInit } from "@nestjs/common";
import type { Kysely } from "kysely";
import { createOrdersTable, openAppDatabase } from "../../shared/app-database.mjs";

/** The app's own database access (a Kysely on DATABASE_URL), a provider like any other. */
@Injectable()
export class AppDatabase implements OnModuleInit, OnApplicationShutdown {
  // biome-ignore lint/suspicious/noExplicitAny: the app's tables are not typed in this example
  readonly db: Kysely<any> = openAppDatabase(process.env.DATABASE_URL);

  async onModuleInit(): Promise<void> {
    await createOrdersTable(this.db);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.db.destroy();
  }
}
