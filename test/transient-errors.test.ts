import { describe, expect, it } from "vitest";
import { isConnectionError } from "../src/database/transient-errors.js";

describe("isConnectionError", () => {
  const error = (fields: Record<string, unknown>) => Object.assign(new Error(String(fields.message ?? "x")), fields);

  it("recognizes lost, refused and shutting-down connections on every database", () => {
    for (const code of [
      "ECONNRESET",
      "ECONNREFUSED",
      "57P01",
      "08006",
      "08003",
      "PROTOCOL_CONNECTION_LOST",
      "SQLITE_BUSY",
      "SQLITE_BUSY_SNAPSHOT",
    ]) {
      expect(isConnectionError(error({ code })), code).toBe(true);
    }
    expect(isConnectionError(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isConnectionError(new Error("wrapped", { cause: error({ code: "ECONNRESET" }) }))).toBe(true);
    // A Galera node that is not synced (joining, or outside the primary component).
    expect(
      isConnectionError(
        error({
          code: "ER_UNKNOWN_COM_ERROR",
          errno: 1047,
          message: "WSREP has not yet prepared node for application use",
        }),
      ),
    ).toBe(true);
  });

  it("leaves other errors alone", () => {
    for (const code of ["23505", "42P01", "ER_DUP_ENTRY", "SQLITE_CONSTRAINT"])
      expect(isConnectionError(error({ code })), code).toBe(false);
    expect(isConnectionError(new Error("injected fault"))).toBe(false);
    expect(isConnectionError(null)).toBe(false);
  });
});
