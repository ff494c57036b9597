import type { Selectable } from "kysely";
import type { Db, Dialect } from "../database/dialect.js";
import type { RecurringTasksTable } from "../database/schema.js";
import type { UniqueIndex } from "../database/unique-violation.js";
import { RecurringTaskError } from "../errors.js";
import type { RecurringTask } from "../definitions/recurring-task.js";
import { CronSchedule, DEFAULT_TIMEZONE } from "../definitions/schedule.js";

/** A recurring_tasks row as read from the database. */
export type RecurringTaskRow = Selectable<RecurringTasksTable>;

/** What a static sync changed, by task key. */
export interface RecurringSyncResult {
  readonly added: string[];
  readonly updated: string[];
  readonly deleted: string[];
}

const KEY_INDEX: UniqueIndex = {
  name: "index_firm_queue_recurring_tasks_on_key",
  table: "firm_queue_recurring_tasks",
  columns: ["key"],
};

/** Every task, static and dynamic, in key order; `only` narrows to one kind. */
export async function listRecurringTaskRows(db: Db, only?: "static" | "dynamic"): Promise<RecurringTaskRow[]> {
  let query = db.selectFrom("firm_queue_recurring_tasks").selectAll().orderBy("key");
  if (only !== undefined) query = query.where("static", "=", only === "static");
  return query.execute();
}

/** What a row says about its task, read as is (arguments stay serialized; nothing is checked). */
export function taskFieldsOf(row: RecurringTaskRow): Omit<RecurringTask, "arguments"> {
  return {
    key: row.key,
    job: row.class_name ?? "",
    schedule: row.schedule,
    timezone: row.timezone ?? DEFAULT_TIMEZONE,
    queue: row.queue_name,
    priority: row.priority,
    description: row.description,
    static: Boolean(row.static),
  };
}

/** A row as a task. Throws {@link RecurringTaskError} when its schedule or zone is unusable here. */
export function taskFromRow(row: RecurringTaskRow): RecurringTask {
  const task: RecurringTask = { ...taskFieldsOf(row), arguments: row.arguments ?? "null" };
  if (task.job === "") throw new RecurringTaskError(task.key, "the stored task names no job (class_name is empty)");
  new CronSchedule(task.key, task.schedule, task.timezone);
  return Object.freeze(task);
}

/**
 * Make the static rows match `tasks`: insert new keys, update changed ones (a dynamic task with
 * a key now declared in configuration becomes static), delete static rows whose key is gone.
 * Dynamic tasks are left alone. Run it in one transaction; schedulers starting together may race
 * to insert the same key, and the loser runs the transaction again (see {@link isTaskKeyConflict}).
 */
export async function syncStaticRecurringTasks(
  trx: Db,
  tasks: readonly RecurringTask[],
  now: Date,
): Promise<RecurringSyncResult> {
  const existing = new Map((await listRecurringTaskRows(trx)).map((row) => [row.key, row]));
  const result: RecurringSyncResult = { added: [], updated: [], deleted: [] };
  for (const task of tasks) {
    const row = existing.get(task.key);
    if (!row) {
      await insertTask(trx, task, now);
      result.added.push(task.key);
    } else if (!sameTask(row, task)) {
      await updateTask(trx, task, now);
      result.updated.push(task.key);
    }
  }
  const declared = new Set(tasks.map((task) => task.key));
  const gone = [...existing.values()]
    .filter((row) => Boolean(row.static) && !declared.has(row.key))
    .map((row) => row.key);
  if (gone.length > 0)
    await trx.deleteFrom("firm_queue_recurring_tasks").where("key", "in", gone).where("static", "=", true).execute();
  result.deleted.push(...gone);
  return result;
}

/**
 * Create or replace a dynamic task. A key that belongs to a static task is refused: the
 * configuration owns it and would overwrite the change at the next start.
 */
export async function saveDynamicRecurringTask(trx: Db, task: RecurringTask, now: Date): Promise<"added" | "updated"> {
  const row = await trx
    .selectFrom("firm_queue_recurring_tasks")
    .select("static")
    .where("key", "=", task.key)
    .executeTakeFirst();
  if (row?.static) throw staticKeyError(task.key);
  if (row) {
    await updateTask(trx, task, now);
    return "updated";
  }
  await insertTask(trx, task, now);
  return "added";
}

/** Delete a dynamic task; false when there is none with that key. Static keys are refused. */
export async function deleteDynamicRecurringTask(trx: Db, key: string): Promise<boolean> {
  const row = await trx
    .selectFrom("firm_queue_recurring_tasks")
    .select("static")
    .where("key", "=", key)
    .executeTakeFirst();
  if (!row) return false;
  if (row.static) throw staticKeyError(key);
  const result = await trx
    .deleteFrom("firm_queue_recurring_tasks")
    .where("key", "=", key)
    .where("static", "=", false)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Take tick `runAt` of a task for this transaction by advancing the task's `last_run_at` to it.
 * The UPDATE locks the task row: a second scheduler on the same tick waits, then finds the mark
 * already at `runAt` and updates nothing. Returns `taken`, `done` (this or a later tick was
 * already fired) or `missing` (the task is no longer in the table).
 */
export async function takeRecurringTick(trx: Db, key: string, runAt: Date): Promise<"taken" | "done" | "missing"> {
  const result = await trx
    .updateTable("firm_queue_recurring_tasks")
    .set({ last_run_at: runAt })
    .where("key", "=", key)
    .where((eb) => eb.or([eb("last_run_at", "is", null), eb("last_run_at", "<", runAt)]))
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) > 0) return "taken";
  const row = await trx.selectFrom("firm_queue_recurring_tasks").select("id").where("key", "=", key).executeTakeFirst();
  return row ? "done" : "missing";
}

function staticKeyError(key: string): RecurringTaskError {
  return new RecurringTaskError(
    key,
    "is declared in configuration (a static task); change or remove it there, or use another key",
  );
}

function columnsOf(task: RecurringTask) {
  return {
    schedule: task.schedule,
    timezone: task.timezone,
    class_name: task.job,
    arguments: task.arguments,
    queue_name: task.queue,
    priority: task.priority,
    description: task.description,
    static: task.static,
  };
}

async function insertTask(trx: Db, task: RecurringTask, now: Date): Promise<void> {
  await trx
    .insertInto("firm_queue_recurring_tasks")
    .values({ key: task.key, ...columnsOf(task), created_at: now, updated_at: now })
    .execute();
}

async function updateTask(trx: Db, task: RecurringTask, now: Date): Promise<void> {
  await trx
    .updateTable("firm_queue_recurring_tasks")
    .set({ ...columnsOf(task), updated_at: now })
    .where("key", "=", task.key)
    .execute();
}

function sameTask(row: RecurringTaskRow, task: RecurringTask): boolean {
  return (
    row.schedule === task.schedule &&
    (row.timezone ?? DEFAULT_TIMEZONE) === task.timezone &&
    row.class_name === task.job &&
    row.arguments === task.arguments &&
    row.queue_name === task.queue &&
    row.priority === task.priority &&
    row.description === task.description &&
    Boolean(row.static) === task.static
  );
}

/**
 * Whether `error` says two writers inserted one new task key at once: the loser's transaction
 * failed whole, and running it again finds the row the winner wrote.
 */
export function isTaskKeyConflict(dialect: Dialect, error: unknown): boolean {
  return dialect.isUniqueViolation(error, KEY_INDEX);
}
