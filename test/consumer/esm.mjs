// Runs as a plain ES module in a project that installed the packed firm-queue tarball.
import { FirmQueue, MissingDriverError } from "firm-queue";

const firm = new FirmQueue({ databaseUrl: `sqlite:${process.argv[2]}`, logLevel: "warn" });
const said = [];
const greet = firm.defineJob("greet", async ({ name }) => void said.push(`hello ${name}`));
await firm.migrate();
await greet.enqueue({ name: "esm" });
await firm.drain();
await firm.close();
console.log(said.join(","));

// This project did not install pg: the error names the package and the command.
const postgres = new FirmQueue({ databaseUrl: "postgres://app@127.0.0.1:1/app", logLevel: "error" });
try {
  await postgres.migrate();
} catch (error) {
  console.log(error instanceof MissingDriverError ? error.message : `unexpected: ${error}`);
}

// The app's own better-sqlite3 Database as firm-queue's database, and enqueue inside a
// transaction of the app's own Kysely: committed once, rolled back once.
const { default: Database } = await import("better-sqlite3");
const { Kysely, SqliteDialect } = await import("kysely");
const file = `${process.argv[2]}.app`;
const handle = new Database(file);
const own = new FirmQueue({ database: handle, logLevel: "warn" });
const track = own.defineJob("track", async () => undefined);
await own.migrate();
const app = new Kysely({ dialect: new SqliteDialect({ database: new Database(file) }) });
await app.transaction().execute((trx) => track.enqueue({ step: 1 }, { transaction: trx }));
await app
  .transaction()
  .execute(async (trx) => {
    await track.enqueue({ step: 2 }, { transaction: trx });
    throw new Error("rolled back");
  })
  .catch(() => undefined);
console.log(`ran ${await own.drain()} of the app's transactional jobs`);
await own.close();
await app.destroy();
console.log(`handle still open: ${handle.open}`);
handle.close();
