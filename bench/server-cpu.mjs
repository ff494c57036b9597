// CPU time spent by one throwaway database server, read from /proc: for the bench scripts that
// report server CPU per 1,000 jobs beside their rate.
import { readdirSync, readFileSync } from "node:fs";

/** Milliseconds per clock tick (USER_HZ is 100 on Linux). */
const TICK_MS = 10;

/**
 * CPU time (user + system, ms) of the server listening on `url`'s port: its main process (its
 * command line names the port, as `-p PORT` for postgres, `--port=PORT` for mariadbd, or its
 * title `redis-server HOST:PORT` for Redis) and the
 * processes it started (PostgreSQL's backends). Other servers on the machine are not counted.
 * 0 when no such server runs here (a server of one's own given by URL elsewhere).
 * @param {string} url
 */
export function serverCpuMs(url) {
  const port = new URL(url).port;
  const processes = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const arguments_ = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      processes.push({ pid, ppid: fields[1], ticks: Number(fields[11]) + Number(fields[12]), arguments_ });
    } catch {
      // the process ended while we looked
    }
  }
  const main = processes.find(
    ({ arguments_ }) =>
      arguments_.includes(`--port=${port}`) ||
      arguments_.some((arg, i) => (arg === "-p" || arg === "--port") && arguments_[i + 1] === port) ||
      // redis-server replaces its command line with its title, "redis-server 127.0.0.1:PORT".
      new RegExp(`^redis-server \\S*:${port}\\b`).test(arguments_[0] ?? ""),
  );
  if (!main) return 0;
  const ours = processes.filter((p) => p.pid === main.pid || p.ppid === main.pid);
  return ours.reduce((sum, p) => sum + p.ticks * TICK_MS, 0);
}
