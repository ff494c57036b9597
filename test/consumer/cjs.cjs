// Runs as CommonJS: require() of firm-queue's ES modules (Node 20.19+ and 22.12+).
const { FirmQueue } = require("firm-queue");

async function main() {
  const firm = new FirmQueue({ databaseUrl: `sqlite:${process.argv[2]}`, logLevel: "warn" });
  const said = [];
  const greet = firm.defineJob("greet", async ({ name }) => void said.push(`hello ${name}`));
  await firm.migrate();
  await greet.enqueue({ name: "cjs" });
  await firm.drain();
  await firm.close();
  console.log(said.join(","));
}
main();
