import type pg from "pg";
import type { ConnectionSettings } from "./connection-settings.js";
import type { ParsedDatabaseUrl } from "./url.js";

/** The channel migration 004's trigger notifies when jobs become ready. */
const CHANNEL = "firm_queue_ready";
const FIRST_RETRY_MS = 500;
const LONGEST_RETRY_MS = 30_000;

/**
 * LISTEN for ready jobs on a connection of its own (a pooled one could not hold the LISTEN).
 * A lost connection is reported to `onError` and replaced, backing off up to 30 s; each time it
 * is (re)established `onReady` fires once, since jobs may have arrived while nobody listened.
 * Resolves once the first attempt is over (listening or not) to the function that stops it all.
 * The connection sits idle between notifications, so only TCP keepalive can tell that its server
 * went silent; `url` may differ from the pool's (a direct URL beside a transaction pooler, which
 * cannot hold a LISTEN).
 */
export async function listenForReadyJobs(
  url: ParsedDatabaseUrl,
  settings: ConnectionSettings,
  onReady: () => void,
  onError: (error: unknown) => void,
): Promise<() => Promise<void>> {
  const { default: driver } = await import("pg");
  let stopped = false;
  let current: pg.Client | undefined;
  let retryIn = FIRST_RETRY_MS;
  let retry: NodeJS.Timeout | undefined;

  const lose = (client: pg.Client, error: unknown): void => {
    if (client !== current && current !== undefined) return;
    current = undefined;
    client.end().catch(() => undefined);
    if (stopped) return;
    onError(error);
    retry = setTimeout(() => void connect(), retryIn);
    retry.unref();
    retryIn = Math.min(retryIn * 2, LONGEST_RETRY_MS);
  };

  const connect = async (): Promise<void> => {
    if (stopped) return;
    const client = new driver.Client({
      connectionString: url.url,
      keepAlive: true,
      keepAliveInitialDelayMillis: settings.keepAliveDelay,
      connectionTimeoutMillis: settings.connectTimeout,
      fallback_application_name: "firm-queue listener",
    });
    current = client;
    client.on("notification", () => onReady());
    client.on("error", (error) => lose(client, error));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (error) {
      lose(client, error);
      return;
    }
    if (stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    retryIn = FIRST_RETRY_MS;
    onReady();
  };

  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const client = current;
    current = undefined;
    await client?.end().catch(() => undefined);
  };
}
