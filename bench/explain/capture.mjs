// Recording the statements a piece of code sends to PostgreSQL through node-postgres, for
// bench/explain-claim.mjs. Every pg.Client's query() is wrapped while `body` runs; statements
// that differ only in how many parameters a list holds count as one.
import pg from "pg";

/** What can be EXPLAINed: the data-reading and data-changing statements. */
const EXPLAINABLE = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i;

/**
 * @typedef {{ text: string, values: unknown[], count: number }} Statement
 *   the first text and parameters seen of a kind of statement, and how often it was sent
 */

/**
 * @param {() => Promise<void>} body
 * @returns {Promise<Statement[]>} in the order first sent
 */
export async function captureStatements(body) {
  /** @type {Map<string, Statement>} */
  const seen = new Map();
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function query(config, values, callback) {
    const text = typeof config === "string" ? config : config?.text;
    const params = Array.isArray(values) ? values : Array.isArray(config?.values) ? config.values : [];
    if (typeof text === "string" && EXPLAINABLE.test(text)) {
      const key = shape(text);
      const known = seen.get(key);
      if (known) known.count++;
      else seen.set(key, { text: text.trim(), values: [...params], count: 1 });
    }
    return original.call(this, config, values, callback);
  };
  try {
    await body();
  } finally {
    pg.Client.prototype.query = original;
  }
  return [...seen.values()];
}

/**
 * The statement with whitespace and parameter lists collapsed: "in ($1, $2)" and "in ($1)" are one
 * kind, and so are multi-row VALUES lists of any length.
 */
function shape(text) {
  return text
    .replace(/\s+/g, " ")
    .replace(/\$\d+(\s*,\s*\$\d+)*/g, "$n")
    .replace(/\(\$n\)(\s*,\s*\(\$n\))+/g, "($n)")
    .trim();
}
