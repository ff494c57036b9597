/**
 * Lock conflicts that a database resolves by aborting one transaction (deadlocks, lock waits that
 * timed out, SQLite's busy timeout running out) are not bugs: the same transaction run again a
 * moment later succeeds. Transactions in firm-queue are short and free of side effects outside
 * the database, so they are retried a few times before the error is let through.
 */
const MAX_ATTEMPTS = 6;

/** Run `work`, running it again a few times with a short pause while it fails with an error `isTransient` accepts. */
export async function retryTransient<T>(isTransient: (error: unknown) => boolean, work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= MAX_ATTEMPTS || !isTransient(error)) throw error;
      // Back off a little more each time, with jitter so two losers do not collide again.
      const delay = Math.random() * 10 * 2 ** attempt;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** Node's socket error codes that mean the connection to the database is gone or refused. */
const SOCKET_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTCONN",
  "EAI_AGAIN",
]);

/** MariaDB/MySQL driver codes for a lost or refused connection. */
const MYSQL_CODES = new Set([
  "PROTOCOL_CONNECTION_LOST",
  "PROTOCOL_SEQUENCE_TIMEOUT",
  "ER_SERVER_SHUTDOWN",
  "ER_CON_COUNT_ERROR",
  "ER_CONNECTION_KILLED",
]);

/** PostgreSQL SQLSTATEs: admin_shutdown, crash_shutdown, cannot_connect_now. Class 08 is matched whole. */
const POSTGRES_CODES = new Set(["57P01", "57P02", "57P03"]);

/** Messages drivers use for a connection that ended under them, when they give no code. */
const MESSAGES = [
  /Connection terminated/i,
  /connection is closed/i,
  /Client has encountered a connection error/i,
  /socket hang up/i,
  /Can't add new command when connection is in closed state/i,
  // A Galera node that is joining, or cut off from the cluster's primary component (errno 1047):
  // it answers, but takes no statements until it is synced again.
  /WSREP has not yet prepared node for application use/i,
];

/**
 * Whether `error` says the database connection failed (reset, refused, the server shutting
 * down) or, on SQLite, that another process held the write lock too long (SQLITE_BUSY): errors
 * that go away by themselves, so the operation should be tried again later, not given up on.
 * Whether it is safe to repeat at once is the caller's call: a write whose COMMIT may have
 * landed must be idempotent to be repeated.
 */
export function isConnectionError(error: unknown): boolean {
  for (
    let current = error, depth = 0;
    current && depth < 5;
    current = (current as { cause?: unknown }).cause, depth++
  ) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === "string") {
      if (SOCKET_CODES.has(code) || MYSQL_CODES.has(code) || POSTGRES_CODES.has(code) || code.startsWith("SQLITE_BUSY"))
        return true;
      if (/^08[0-9A-Z]{3}$/.test(code)) return true;
    }
    if (typeof message === "string" && MESSAGES.some((pattern) => pattern.test(message))) return true;
  }
  return false;
}
