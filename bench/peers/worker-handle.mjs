// The benchmark's side of a system's worker process (./worker-process.mjs): start it, call its
// methods, receive its job starts, and make sure it is gone when the system's run ends.
import { fork } from "node:child_process";
import { withTimeout } from "./clock.mjs";

/** How long the worker process gets to close its system and exit before it is killed. */
const CLOSE_TIMEOUT_MS = 20_000;

export class WorkerProcess {
  /**
   * Fork the worker process and open the system in it (attached to the schema the benchmark's
   * process created).
   * @param {string} id the adapter's id
   * @param {import("./adapter.mjs").OpenOptions} options
   * @param {readonly string[]} [nodeFlags] node and V8 flags for the worker process
   */
  static async start(id, options, nodeFlags = []) {
    const handle = new WorkerProcess(nodeFlags);
    try {
      await handle.call("open", { id, options });
    } catch (error) {
      await handle.close();
      throw error;
    }
    return handle;
  }

  /** @param {readonly string[]} nodeFlags */
  constructor(nodeFlags) {
    this.child = fork(new URL("./worker-process.mjs", import.meta.url), [], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      execArgv: [...nodeFlags],
    });
    /** @type {Map<number, { resolve: (value: any) => void, reject: (error: Error) => void }>} */
    this.pending = new Map();
    this.nextId = 1;
    /** @type {((message: any) => void) | undefined} */
    this.onStarted = undefined;
    this.exited = new Promise((resolve) => {
      this.child.once("exit", (code, signal) => {
        const why = new Error(`the worker process exited (${signal ?? `code ${code}`}) before answering`);
        for (const { reject } of this.pending.values()) reject(why);
        this.pending.clear();
        resolve(undefined);
      });
    });
    this.child.on("message", (/** @type {any} */ message) => {
      if (message.event === "started") return this.onStarted?.(message.latency);
      const waiting = this.pending.get(message.id);
      if (!waiting) return;
      this.pending.delete(message.id);
      if (message.error) waiting.reject(new Error(`in the worker process: ${message.error}`));
      else waiting.resolve(message.result);
    });
  }

  /**
   * @param {string} method @param {unknown} [args]
   * @returns {Promise<any>}
   */
  call(method, args) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (!this.child.connected) return reject(new Error("the worker process is gone"));
      this.pending.set(id, { resolve, reject });
      this.child.send({ id, method, args });
    });
  }

  /** Close the system in the worker process and wait for the process to exit; kill it if it does not. */
  async close() {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      await withTimeout(this.call("close"), CLOSE_TIMEOUT_MS, "timeout").catch(() => this.child.kill("SIGTERM"));
      await withTimeout(this.exited, CLOSE_TIMEOUT_MS, "timeout").catch(() => this.child.kill("SIGKILL"));
    }
    await this.exited;
  }
}
