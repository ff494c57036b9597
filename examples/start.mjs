// The example app behind `npm start`: a small shop's background jobs on SQLite. It enqueues a few
// jobs (now, later, in bulk, one that fails), runs a worker and a dispatcher in this process,
// prints what happens, and stops when everything has run.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FirmQueue } from "firm-queue";

const dir = mkdtempSync(join(tmpdir(), "firm-queue-example-"));
const databaseUrl = `sqlite:${join(dir, "shop.sqlite3")}`;
const firm = new FirmQueue({ databaseUrl, logLevel: "warn" });
const started = Date.now();
const say = (text) => console.log(`[${String(Date.now() - started).padStart(5)} ms] ${text}`);

const sendWelcomeEmail = firm.defineJob("send-welcome-email", async ({ email }, context) => {
  await new Promise((resolve) => setTimeout(resolve, 50));
  say(`job ${context.jobId}: welcome email sent to ${email}`);
});

const resizeImage = firm.defineJob(
  "resize-image",
  async ({ file, width }, context) => {
    await new Promise((resolve) => setTimeout(resolve, 30));
    say(`job ${context.jobId}: ${file} resized to ${width}px (queue ${context.queue}, priority ${context.priority})`);
  },
  { queue: "media", priority: 5 },
);

const remindCart = firm.defineJob("remind-abandoned-cart", async ({ cartId, total }, context) => {
  say(
    `job ${context.jobId}: reminder for cart ${cartId} (total ${total} cents), enqueued ${Date.now() - context.enqueuedAt.getTime()} ms ago`,
  );
});

const chargeCard = firm.defineJob("charge-card", async ({ card }) => {
  throw new Error(`card ending ${card.slice(-4)} was declined`);
});

try {
  say(`database ${databaseUrl}`);
  const applied = await firm.migrate();
  say(`migrations applied: ${applied.join(", ") || "none needed"}`);

  const welcome = (await sendWelcomeEmail.enqueue({ email: "ada@example.com" })).id;
  const images = (
    await resizeImage.enqueueAll([
      { file: "hero.png", width: 1200 },
      { file: "thumb.png", width: 200 },
      { file: "avatar.png", width: 64 },
    ])
  ).map((result) => result.id);
  const urgent = (await resizeImage.enqueue({ file: "banner.png", width: 800 }, { priority: 0 })).id;
  const reminder = (await remindCart.enqueue({ cartId: 42, total: 129_900n }, { wait: "1s" })).id;
  const charge = (await chargeCard.enqueue({ card: "4000000000000002" })).id;
  say(
    `enqueued welcome=${welcome}, images=${images.join(",")}, urgent image=${urgent}, reminder=${reminder} (in 1 s), charge=${charge}`,
  );

  for (const queue of await firm.queues.list()) say(`queue ${queue.name}: ${queue.size} ready`);

  const supervisor = await firm.start({
    mode: "async",
    workers: [{ queues: ["default", "media"], concurrency: 2, pollingInterval: 50 }],
    dispatchers: [{ pollingInterval: 100 }],
  });
  say("worker and dispatcher started");

  const ids = [welcome, ...images, urgent, reminder, charge];
  for (;;) {
    const jobs = await Promise.all(ids.map((id) => firm.getJob(id)));
    if (jobs.every((job) => job.state === "finished" || job.state === "failed")) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await supervisor.stop();
  say("stopped");

  for (const id of ids) {
    const job = await firm.getJob(id);
    say(`job ${id} ${job.name}: ${job.state}${job.error ? ` (${job.error.name}: ${job.error.message})` : ""}`);
  }
} finally {
  await firm.close();
  rmSync(dir, { recursive: true, force: true });
}
