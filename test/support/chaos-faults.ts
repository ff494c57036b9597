import { setTimeout as sleep } from "node:timers/promises";
import { waitFor } from "./harness.js";
import type { ChaosCluster } from "./chaos-cluster.js";
import type { ChaosDatabase } from "./chaos-database.js";
import type { Random } from "./chaos-settings.js";

export type FaultKind = "kill-workers" | "kill-supervisor" | "restart-server" | "drop-connections" | "stall" | "refuse";

/** What the run did to the processes and the database. */
export interface FaultCounts {
  workerKills: number;
  dispatcherKills: number;
  supervisorKills: number;
  serverRestarts: number;
  /** Times every connection was cut at once, and how many connections that cut in all. */
  connectionDrops: number;
  droppedConnections: number;
  stalls: number;
  refusals: number;
}

/** The faults this database allows: kills everywhere; connection faults and restarts where there is a server. */
export function faultMenu(database: ChaosDatabase): FaultKind[] {
  return [
    "kill-workers",
    "kill-supervisor",
    ...(database.proxy ? (["drop-connections", "stall", "refuse"] as const) : []),
    ...(database.restart ? (["restart-server"] as const) : []),
  ];
}

/** Injects one fault at a time and counts them. Outages last 1–3 s, far below the alive threshold. */
export class FaultInjector {
  readonly counts: FaultCounts = {
    workerKills: 0,
    dispatcherKills: 0,
    supervisorKills: 0,
    serverRestarts: 0,
    connectionDrops: 0,
    droppedConnections: 0,
    stalls: 0,
    refusals: 0,
  };

  constructor(
    private readonly cluster: ChaosCluster,
    private readonly database: ChaosDatabase,
    private readonly random: Random,
  ) {}

  async inject(kind: FaultKind): Promise<void> {
    this.cluster.note(`fault ${kind} begins`);
    await this.apply(kind);
    this.cluster.note(`fault ${kind} ends`);
  }

  private async apply(kind: FaultKind): Promise<void> {
    const proxy = this.database.proxy;
    switch (kind) {
      case "kill-workers":
        await this.killWorkers(this.random.between(1, 2));
        if (this.random.next() < 0.25) this.killDispatcher();
        return;
      case "kill-supervisor":
        this.cluster.killSupervisor(this.random);
        this.counts.supervisorKills++;
        // The replacement boots while the killed one's children finish their jobs.
        await this.cluster.startSupervisor();
        return;
      case "restart-server":
        await this.database.restart!();
        this.counts.serverRestarts++;
        return;
      case "drop-connections":
        this.counts.droppedConnections += proxy!.dropAll();
        this.counts.connectionDrops++;
        return;
      case "stall":
        this.counts.stalls++;
        await this.outage("stall");
        return;
      case "refuse":
        this.counts.droppedConnections += proxy!.dropAll();
        this.counts.connectionDrops++;
        this.counts.refusals++;
        await this.outage("refuse");
        return;
    }
  }

  /**
   * The proxy stalls or refuses for 1–3 s; sometimes a worker dies in the middle of it (never a
   * supervisor: its replacement could not boot).
   */
  private async outage(mode: "stall" | "refuse"): Promise<void> {
    const proxy = this.database.proxy!;
    proxy.setMode(mode);
    try {
      await sleep(this.random.between(500, 1500));
      if (this.random.next() < 0.3) await this.killWorkers(1, { wait: false });
      await sleep(this.random.between(500, 1500));
    } finally {
      proxy.setMode("pass");
    }
  }

  /** SIGKILL up to `count` live workers; unless told not to, first wait until there is one. */
  private async killWorkers(count: number, options: { wait: boolean } = { wait: true }): Promise<void> {
    const workers = () => [...this.cluster.liveChildren()].filter(([, kind]) => kind === "Worker").map(([pid]) => pid);
    // Killed workers are replaced at once, but not registered at once.
    if (options.wait) await waitFor(() => workers().length > 0, 60_000, "a live worker to kill");
    for (const pid of this.random.shuffle(workers()).slice(0, count)) {
      this.cluster.kill(pid, "worker");
      this.counts.workerKills++;
    }
  }

  private killDispatcher(): void {
    const dispatchers = [...this.cluster.liveChildren()]
      .filter(([, kind]) => kind === "Dispatcher")
      .map(([pid]) => pid);
    if (dispatchers.length === 0) return;
    this.cluster.kill(this.random.pick(dispatchers), "dispatcher");
    this.counts.dispatcherKills++;
  }
}
