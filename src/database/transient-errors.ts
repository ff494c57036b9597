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
