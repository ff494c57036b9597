import { createTables } from "./001-create-tables.js";
import { addRecurringTaskTimezone } from "./002-add-recurring-task-timezone.js";
import type { Migration } from "./table-spec.js";

/** Every migration, oldest first. Append only: a released migration is never edited. */
export const MIGRATIONS: readonly Migration[] = [createTables, addRecurringTaskTimezone];
