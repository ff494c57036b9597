import { DatabaseUrlError } from "../errors.js";

/** One server of a PostgreSQL URL that lists several. */
export interface PostgresHost {
  /** `host:port` as written (for messages). */
  readonly address: string;
  /** A single-host URL for that server, which `pg` understands, with every other part kept. */
  readonly url: string;
}

/** The servers a PostgreSQL URL names, and which of them it wants. */
export interface PostgresHosts {
  readonly hosts: readonly PostgresHost[];
  /**
   * `target_session_attrs=read-write` (or `primary`): a connection is only kept on a server that
   * takes writes, so a standby in the list is skipped until it is promoted.
   */
  readonly readWrite: boolean;
}

const READ_WRITE = new Set(["read-write", "primary"]);
const ANY = new Set(["any", "prefer-standby"]);

/**
 * Take apart a URL that may list several servers, as libpq allows:
 * `postgres://user@host1:5432,host2:5433/db?target_session_attrs=read-write`. `pg` itself
 * understands one host only, so each host gets a URL of its own; `target_session_attrs` is
 * removed from those (it is firm-queue's to act on, see postgres-failover.ts). A host without a
 * port gets 5432, as in libpq.
 */
export function postgresHosts(url: string): PostgresHosts {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*@)?([^/?#]*)(.*)$/i.exec(url);
  if (!match) throw new DatabaseUrlError(url, "it is not a valid URL");
  const [, scheme, userinfo = "", hostList, rest] = match as unknown as [
    string,
    string,
    string | undefined,
    string,
    string,
  ];
  const [path, query = ""] = splitOnce(rest, "?");
  const params = new URLSearchParams(query);
  const wanted = params.get("target_session_attrs");
  if (wanted !== null && !READ_WRITE.has(wanted) && !ANY.has(wanted))
    throw new DatabaseUrlError(url, `target_session_attrs=${wanted} is not supported; use read-write, primary or any`);
  params.delete("target_session_attrs");
  const kept = params.toString();
  const entries = hostList.split(",");
  if (entries.some((entry) => entry.trim() === "")) throw new DatabaseUrlError(url, "it names no host");
  const hosts = entries.map((entry) => {
    const address = /:\d+$/.test(entry) ? entry : `${entry}:5432`;
    const single = `${scheme}${userinfo}${address}${path}${kept === "" ? "" : `?${kept}`}`;
    try {
      new URL(single);
    } catch {
      throw new DatabaseUrlError(url, `host ${JSON.stringify(entry)} is not a valid host[:port]`);
    }
    return { address, url: single };
  });
  return { hosts, readWrite: wanted !== null && READ_WRITE.has(wanted) };
}

/** Whether the URL needs firm-queue's host selection (several hosts, or a read-write target). */
export function needsHostSelection(hosts: PostgresHosts): boolean {
  return hosts.hosts.length > 1 || hosts.readWrite;
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}
