import { describe, expect, it } from "vitest";
import { DatabaseUrlError } from "../src/index.js";
import { needsHostSelection, postgresHosts } from "../src/database/postgres-hosts.js";
import { parseDatabaseUrl } from "../src/database/url.js";

// The multi-host URL form (libpq's), which pg itself does not understand: taken apart into one URL per server.
describe("PostgreSQL URLs with several hosts", () => {
  it("gives each host a URL of its own, keeping user, password, database and other parameters", () => {
    const hosts = postgresHosts(
      "postgres://app:s3cret@db1:5432,db2,10.0.0.3:6432/queue?sslmode=disable&target_session_attrs=read-write&application_name=x",
    );
    expect(hosts.readWrite).toBe(true);
    expect(hosts.hosts).toEqual([
      { address: "db1:5432", url: "postgres://app:s3cret@db1:5432/queue?sslmode=disable&application_name=x" },
      { address: "db2:5432", url: "postgres://app:s3cret@db2:5432/queue?sslmode=disable&application_name=x" },
      { address: "10.0.0.3:6432", url: "postgres://app:s3cret@10.0.0.3:6432/queue?sslmode=disable&application_name=x" },
    ]);
    expect(needsHostSelection(hosts)).toBe(true);
  });

  it("leaves a plain single-host URL to pg as it is", () => {
    const hosts = postgresHosts("postgresql://postgres@127.0.0.1:5433/db");
    expect(hosts).toEqual({
      hosts: [{ address: "127.0.0.1:5433", url: "postgresql://postgres@127.0.0.1:5433/db" }],
      readWrite: false,
    });
    expect(needsHostSelection(hosts)).toBe(false);
    // One host with read-write still checks that the server takes writes.
    expect(needsHostSelection(postgresHosts("postgres://h:1/db?target_session_attrs=primary"))).toBe(true);
    expect(postgresHosts("postgres://a:1,b:2/db?target_session_attrs=any").readWrite).toBe(false);
  });

  it("is accepted by parseDatabaseUrl, and a bad host list or target is a DatabaseUrlError", () => {
    expect(parseDatabaseUrl("postgres://u@a:5432,b:5433/db").dialect).toBe("postgres");
    for (const bad of [
      "postgres://u@a:5432,/db",
      "postgres://u@,b:1/db",
      "postgres://u@a:1,b:2/db?target_session_attrs=standby",
      "postgres://u@a:1,b c:2/db",
    ]) {
      expect(() => parseDatabaseUrl(bad), bad).toThrow(DatabaseUrlError);
    }
    expect(() => parseDatabaseUrl("postgres://u:pw@a:1,b:2/db?target_session_attrs=standby")).toThrow(
      /target_session_attrs=standby/,
    );
  });
});
