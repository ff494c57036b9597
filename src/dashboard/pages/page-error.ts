import { FirmQueueError } from "../../errors.js";

/** A request the dashboard answers with an error page and this status (bad input, no such job…). */
export class PageError extends FirmQueueError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
