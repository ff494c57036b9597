// The NestJS example: POST /orders saves an order and enqueues its confirmation in one
// transaction; a @JobHandler method of a provider runs the job in this process; the dashboard is
// at /jobs. DATABASE_URL names the database (sqlite:…, postgres://…, mysql://…).
import "reflect-metadata";
import { NestFactory } from "@nestjs/core";
import { AppModule } from "./app.module.js";

const app = await NestFactory.create(AppModule, { logger: ["error", "warn"] });
// TERM and INT run the shutdown hooks: the workers stop, then the FirmQueue is closed.
app.enableShutdownHooks();
await app.listen(Number(process.env.PORT ?? 3000), "127.0.0.1");
console.log(`listening on ${await app.getUrl()}`);
