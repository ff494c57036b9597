import { sql } from "kysely";
import type { Db, DialectName } from "../../src/database/dialect.js";

/** A switchable database fault: a trigger that raises while its switch is on. */
export interface Fault {
  on(): Promise<void>;
  off(): Promise<void>;
  /** Drop the trigger (and its switch row). */
  remove(): Promise<void>;
}

export interface FaultSpec {
  /** The table the trigger watches. */
  readonly table: string;
  readonly event: "INSERT" | "UPDATE" | "DELETE";
  /** An SQL condition on NEW/OLD (the same text on every database) that must also hold. */
  readonly when?: string;
}

let counter = 0;

/**
 * Install a BEFORE trigger on `spec.table` that fails the statement with "injected fault" while
 * the fault is on and `spec.when` holds. The switch is a row in a table of its own, so any
 * connection (the code under test's own) sees it at once.
 */
export async function installFault(db: Db, dialect: DialectName, spec: FaultSpec): Promise<Fault> {
  const name = `firm_test_fault_${process.pid}_${++counter}`;
  await sql.raw("CREATE TABLE IF NOT EXISTS firm_test_faults (name VARCHAR(100) PRIMARY KEY)").execute(db);
  const active = `EXISTS (SELECT 1 FROM firm_test_faults WHERE name = '${name}')`;
  const condition = spec.when ? `${active} AND (${spec.when})` : active;
  switch (dialect) {
    case "sqlite":
      await sql
        .raw(
          `CREATE TRIGGER ${name} BEFORE ${spec.event} ON ${spec.table} WHEN ${condition} BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
        )
        .execute(db);
      break;
    case "postgres":
      await sql
        .raw(
          `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF ${condition} THEN RAISE EXCEPTION 'injected fault'; END IF; ` +
            `IF TG_OP = 'DELETE' THEN RETURN OLD; END IF; RETURN NEW; END $$`,
        )
        .execute(db);
      await sql
        .raw(`CREATE TRIGGER ${name} BEFORE ${spec.event} ON ${spec.table} FOR EACH ROW EXECUTE FUNCTION ${name}()`)
        .execute(db);
      break;
    case "mysql":
      await sql
        .raw(
          `CREATE TRIGGER ${name} BEFORE ${spec.event} ON ${spec.table} FOR EACH ROW BEGIN IF ${condition} THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'injected fault'; END IF; END`,
        )
        .execute(db);
      break;
  }
  return {
    on: async () => void (await sql.raw(`INSERT INTO firm_test_faults (name) VALUES ('${name}')`).execute(db)),
    off: async () => void (await sql.raw(`DELETE FROM firm_test_faults WHERE name = '${name}'`).execute(db)),
    async remove() {
      await sql.raw(`DELETE FROM firm_test_faults WHERE name = '${name}'`).execute(db);
      await sql
        .raw(dialect === "postgres" ? `DROP TRIGGER ${name} ON ${spec.table}` : `DROP TRIGGER ${name}`)
        .execute(db);
      if (dialect === "postgres") await sql.raw(`DROP FUNCTION ${name}()`).execute(db);
    },
  };
}

/** Text of an SQL condition: the job this execution row belongs to is in `queue`. */
export function jobInQueue(row: "NEW" | "OLD", queue: string): string {
  return `(SELECT queue_name FROM firm_queue_jobs WHERE id = ${row}.job_id) = '${queue}'`;
}

/** A fault that, while on, fails every write marking a job finished (its outcome cannot be recorded). */
export function installFinishWriteFault(db: Db, dialect: DialectName): Promise<Fault> {
  return installFault(db, dialect, { table: "firm_queue_jobs", event: "UPDATE", when: "NEW.finished_at IS NOT NULL" });
}
