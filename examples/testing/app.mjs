// The application under test: a sign-up that enqueues a welcome email, whose job enqueues a
// follow-up three days later, and an hourly digest. Its FirmQueue opens DATABASE_URL, or, when
// that is not set (as in these examples' default), an in-memory SQLite database.
import { FirmQueue } from "firm-queue";

export const firm = new FirmQueue({ databaseUrl: process.env.DATABASE_URL ?? "sqlite::memory:", logLevel: "warn" });

export const sent = [];

export const sendWelcome = firm.defineJob("send-welcome", async ({ userId }, context) => {
  context.progress({ step: "rendering" });
  sent.push(`welcome ${userId}`);
  await sendFollowUp.enqueue({ userId }, { wait: "3d" });
  return { delivered: true, userId };
});

export const sendFollowUp = firm.defineJob("send-follow-up", async ({ userId }) => {
  sent.push(`follow-up ${userId}`);
});

export const sendDigest = firm.defineJob("send-digest", async () => {
  sent.push("digest");
});

/** The recurring tasks the application's scheduler runs. */
export const recurring = { "hourly-digest": { schedule: "0 * * * *", job: "send-digest" } };

/** The code under test: what a sign-up request does. */
export async function signUp(userId) {
  await sendWelcome.enqueue({ userId, source: "web" });
  return { userId };
}
