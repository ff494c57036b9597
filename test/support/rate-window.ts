/**
 * The most starts that fall in any half-open window `[t, t + windowMs)`: the quantity the
 * rate-limit contract bounds. Times in ms, any order.
 */
export function mostStartsInWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let first = 0;
  for (let last = 0; last < sorted.length; last++) {
    while (sorted[last]! - sorted[first]! >= windowMs) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

/**
 * How much earlier than the claim a handler's own clock reading may place a start: the claim's
 * time (the database clock) is when a start is charged, and the handler notes the host's clock a
 * moment later. Windows checked from handler times are shortened by this much.
 */
export const START_SKEW_MS = 100;
