// Declarations for netns.mjs, so TypeScript (which has no allowJs here) can import it.

/** One simulated host: a namespace with one interface on the test network. */
export interface NetnsHost {
  /** Namespace name (`ip netns exec <name> …`). */
  readonly namespace: string;
  readonly address: string;
  /** Drop every packet to and from this host (no reset is sent to either side). */
  cut(): void;
  /** Undo {@link cut}. */
  restore(): void;
  /** The command and arguments that run `program` inside this host. */
  command(program: string, args: readonly string[]): [string, string[]];
}

export interface NetnsNetwork {
  readonly id: string;
  /** The database's address on the bridge (in the root namespace). */
  readonly bridgeAddress: string;
  /** The test network, e.g. 10.231.7.0/24. */
  readonly subnet: string;
  readonly hosts: readonly NetnsHost[];
  /** Kill what still runs in the namespaces, then remove namespaces, links and bridge. Idempotent. */
  destroy(): void;
}

/** Null when namespaces can be made here, else why not (not root, no `ip`, no permission…). */
export declare function netnsUnavailableReason(): string | null;
/** Make a bridge and `count` hosts on a fresh 10.231.N.0/24. Throws (having removed what it made) on failure. */
export declare function createNetwork(count: number): NetnsNetwork;
