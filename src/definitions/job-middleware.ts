import { FirmQueueError } from "../errors.js";
import type { JobMiddleware, MiddlewareContext } from "./job-definition.js";

/** A middleware called `next()` more than once: the rest of the chain would run twice. */
export class MiddlewareError extends FirmQueueError {
  constructor(job: string, position: number) {
    super(`Middleware ${position + 1} of job "${job}" called next() more than once`);
  }
}

/**
 * Run `handler` inside `middleware`, the first outermost. Each link calls the next through
 * `next()`; errors travel back up unchanged, so the retry policy sees what the handler threw
 * (or what a middleware threw instead).
 */
export async function runThroughMiddleware(
  middleware: readonly JobMiddleware[],
  context: MiddlewareContext,
  handler: () => unknown,
): Promise<unknown> {
  const step = async (index: number): Promise<unknown> => {
    if (index === middleware.length) return handler();
    let called = false;
    return middleware[index]!(context, () => {
      if (called) return Promise.reject(new MiddlewareError(context.name, index));
      called = true;
      return step(index + 1);
    });
  };
  return step(0);
}
