import type { Database } from "../database/connection.js";
import { heartbeatProcess } from "../models/process.js";
import { Poller } from "./poller.js";

/**
 * Keeps one process row alive. When the row has disappeared (another supervisor pruned this
 * process as dead), `onLost` is called: the role must stop, because its claims were recovered.
 */
export class Heartbeat extends Poller {
  constructor(
    private readonly database: Database,
    readonly processId: number,
    private readonly interval: number,
    private readonly onLost: () => void,
    private readonly onError: (error: unknown) => void,
  ) {
    super();
  }

  protected async poll(): Promise<number> {
    const alive = await heartbeatProcess(this.database.db, this.processId, this.database.clock.now());
    if (!alive) {
      this.onLost();
      void this.stopPolling();
    }
    return this.interval;
  }

  protected onPollError(error: unknown, repeated: boolean): number {
    if (!repeated) this.onError(error);
    return this.interval;
  }
}
