// CommonJS TypeScript under nodenext: require() of the ES module package.
import firmQueue = require("firm-queue");

declare const process: { argv: string[] };
async function main(): Promise<void> {
  const firm = new firmQueue.FirmQueue({ databaseUrl: `sqlite:${process.argv[2]}`, logLevel: "warn" });
  const said: string[] = [];
  const greet = firm.defineJob<{ name: string }>("greet", async (args) => void said.push(`hello ${args.name}`));
  await firm.migrate();
  await greet.enqueue({ name: "cts" });
  await firm.drain();
  await firm.close();
  console.log(said.join(","));
}
void main();
