// A worker in the app's own process (the default, async mode): enqueue, wait until it ran, stop.
import { firm, sendWelcomeEmail } from "./jobs.mjs";

await firm.migrate();
const supervisor = await firm.start();
const { id } = await sendWelcomeEmail.enqueue({ userId: 7 });
const deadline = Date.now() + 20_000;
let job = await firm.getJob(id);
while (job?.state !== "finished" && Date.now() < deadline) {
  await new Promise((resolve) => setTimeout(resolve, 25));
  job = await firm.getJob(id);
}
await supervisor.stop();
await firm.close();
console.log(JSON.stringify({ mode: supervisor.mode, state: job?.state, result: job?.result }));
