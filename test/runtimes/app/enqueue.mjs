// Enqueues as the README's "Enqueue from anywhere in your app" does, and prints the results.
import { firm, sendWelcomeEmail } from "./jobs.mjs";

const now = await sendWelcomeEmail.enqueue({ userId: 42 });
const later = await sendWelcomeEmail.enqueue({ userId: 43 }, { wait: "5m" });
const many = await sendWelcomeEmail.enqueueAll([{ userId: 1 }, { userId: 2 }]);
const byName = await firm.enqueue("send-welcome-email", { userId: 45 });
const unique = [
  await sendWelcomeEmail.enqueue({ userId: 46 }, { key: "welcome-46" }),
  await sendWelcomeEmail.enqueue({ userId: 46 }, { key: "welcome-46" }),
];
const job = await firm.getJob(later.id);
await firm.close();
console.log(JSON.stringify({ now, later: { ...later, state: job?.state }, many, byName, unique }));
