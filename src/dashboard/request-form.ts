import { PageError } from "./pages/page-error.js";

/** Largest form body accepted (a bulk retry of a full page of ids fits many times over). */
export const MAX_FORM_BYTES = 256 * 1024;

/** Refuse a POST body that is not a urlencoded form (415). */
export function checkFormType(type: string | null): void {
  if (!type?.toLowerCase().startsWith("application/x-www-form-urlencoded"))
    throw new PageError(415, "Expected a form (application/x-www-form-urlencoded).");
}
