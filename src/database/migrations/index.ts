import { createTables } from "./001-create-tables.js";
import type { Migration } from "./table-spec.js";

/** Every migration, oldest first. Append only: a released migration is never edited. */
export const MIGRATIONS: readonly Migration[] = [createTables];
