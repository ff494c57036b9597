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
