// Stands in for a heavy dependency only the worker needs (an SDK, a template engine…). It writes
// each mail as a line to MAIL_LOG (when set) so the example's test can see what was sent.
import { appendFile } from "node:fs/promises";

/** "Send" one mail. */
export async function sendMail(to, subject, signal) {
  signal.throwIfAborted();
  if (process.env.MAIL_LOG) await appendFile(process.env.MAIL_LOG, `${JSON.stringify({ to, subject })}\n`);
}
