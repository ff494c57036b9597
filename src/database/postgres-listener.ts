import type pg from "pg";
import type { ConnectionSettings } from "./connection-settings.js";
import type { ParsedDatabaseUrl } from "./url.js";
import { importDriver } from "./driver-import.js";
import { FailoverClient } from "./postgres-failover-client.js";
import { needsHostSelection, postgresHosts } from "./postgres-hosts.js";

/** The channel migration 004's trigger notifies when jobs become ready (with the default table prefix). */
const CHANNEL = "firm_queue_ready";
const FIRST_RETRY_MS = 500;
const LONGEST_RETRY_MS = 30_000;

/** What the listener needs of a pg client (a seam for tests). */
export type ListenerClient = Pick<pg.Client, "connect" | "query" | "end" | "on">;
/** Opens the listener's client: from the URL, or from the settings of an application's own pool. */
export type ListenerClientFactory = (
  url: ParsedDatabaseUrl & { readonly clientConfig?: object },
  settings: ConnectionSettings,
) => Promise<ListenerClient>;

const pgClient: ListenerClientFactory = async (url, settings) => {
  const { default: driver } = await importDriver("pg", "PostgreSQL databases", () => import("pg"));
  // Keepalive: notice a connection that died silently (a dropped route, a frozen server).
  const open = (config: object) =>
    new driver.Client({
      ...config,
      keepAlive: true,
      keepAliveInitialDelayMillis: settings.keepAliveDelay,
      connectionTimeoutMillis: settings.connectTimeout,
      fallback_application_name: "firm-queue listener",
    });
  if (url.clientConfig) return open(url.clientConfig);
  const targets = postgresHosts(url.url);
  if (!needsHostSelection(targets)) return open({ connectionString: url.url });
  return new FailoverClient(targets, (connectionString) => open({ connectionString })) as unknown as ListenerClient;
};

/**
 * LISTEN for ready jobs on a connection of its own (a pooled one could not hold the LISTEN).
 * A lost connection is reported to `onError` and replaced, backing off up to 30 s; each time it
 * is (re)established `onReady` fires once, since jobs may have arrived while nobody listened.
 * There is at most one connection and one pending reconnect at any time, however the loss is
 * reported (an 'error' event, a failed LISTEN, or both). Resolves once the first attempt is over
 * (listening or not) to the function that stops it all and closes the connection. The connection
 * sits idle between notifications, so only TCP keepalive can tell that its server went silent;
 * `url` may differ from the pool's (a direct URL beside a transaction pooler, which cannot hold a
 * LISTEN). `settings.readyChannel` is the channel of a database with another table prefix.
 */
export function listenForReadyJobs(
  url: ParsedDatabaseUrl & { readonly clientConfig?: object },
  settings: ConnectionSettings & { readonly readyChannel?: string },
  onReady: () => void,
  onError: (error: unknown) => void,
  createClient: ListenerClientFactory = pgClient,
): Promise<() => Promise<void>> {
  return listenOnChannel(url, settings, settings.readyChannel ?? CHANNEL, () => onReady(), onError, createClient);
}

/**
 * LISTEN on `channel` as {@link listenForReadyJobs} does, handing each notification's payload to
 * `onNotification`; on every (re)connection it is called once with `undefined`, since
 * notifications may have been missed while nobody listened.
 */
export async function listenOnChannel(
  url: ParsedDatabaseUrl & { readonly clientConfig?: object },
  settings: ConnectionSettings,
  channel: string,
  onNotification: (payload: string | undefined) => void,
  onError: (error: unknown) => void,
  createClient: ListenerClientFactory = pgClient,
): Promise<() => Promise<void>> {
  let stopped = false;
  let current: ListenerClient | undefined;
  const lost = new WeakSet<ListenerClient>();
  let retryIn = FIRST_RETRY_MS;
  let retry: NodeJS.Timeout | undefined;

  const lose = (client: ListenerClient, error: unknown): void => {
    if (lost.has(client)) return;
    lost.add(client);
    if (current === client) current = undefined;
    client.end().catch(() => undefined);
    if (stopped) return;
    onError(error);
    if (retry !== undefined) return;
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, retryIn);
    retry.unref();
    retryIn = Math.min(retryIn * 2, LONGEST_RETRY_MS);
  };

  const connect = async (): Promise<void> => {
    if (stopped || current !== undefined) return;
    let client: ListenerClient;
    try {
      client = await createClient(url, settings);
    } catch (error) {
      onError(error);
      return;
    }
    if (stopped) return;
    current = client;
    client.on("notification", (message) => onNotification(message.payload));
    client.on("error", (error) => lose(client, error));
    try {
      await client.connect();
      await client.query(`LISTEN ${channel}`);
    } catch (error) {
      lose(client, error);
      return;
    }
    if (lost.has(client)) return;
    if (stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    retryIn = FIRST_RETRY_MS;
    onNotification(undefined);
  };

  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    retry = undefined;
    const client = current;
    current = undefined;
    await client?.end().catch(() => undefined);
  };
}
