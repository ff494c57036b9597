const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const NICKNAMES: Record<string, string> = {
  "@yearly": "once a year, January 1st at midnight",
  "@annually": "once a year, January 1st at midnight",
  "@monthly": "on the 1st of every month at midnight",
  "@weekly": "every Sunday at midnight",
  "@daily": "every day at midnight",
  "@midnight": "every day at midnight",
  "@hourly": "every hour, on the hour",
};

const pad = (value: string) => value.padStart(2, "0");

/**
 * A cron schedule in words for the common shapes (every N minutes, hourly, daily, weekly,
 * monthly at a time); null for anything else, where the expression itself is shown.
 */
export function scheduleInWords(schedule: string): string | null {
  const trimmed = schedule.trim();
  if (NICKNAMES[trimmed]) return NICKNAMES[trimmed]!;
  let fields = trimmed.split(/\s+/);
  if (fields.length === 6) {
    if (fields[0] !== "0") return null;
    fields = fields.slice(1);
  }
  if (fields.length !== 5) return null;
  const [minute, hour, day, month, weekday] = fields as [string, string, string, string, string];
  if (month !== "*") return null;
  const number = /^\d+$/;
  if (minute === "*" && hour === "*" && day === "*" && weekday === "*") return "every minute";
  const step = /^\*\/(\d+)$/.exec(minute);
  if (step && hour === "*" && day === "*" && weekday === "*") return `every ${step[1]} minutes`;
  if (!number.test(minute)) return null;
  if (hour === "*" && day === "*" && weekday === "*")
    return minute === "0" ? "every hour, on the hour" : `every hour at minute ${Number(minute)}`;
  if (!number.test(hour)) return null;
  const at = `at ${pad(hour)}:${pad(minute)}`;
  if (day === "*" && weekday === "*") return `every day ${at}`;
  if (day === "*" && /^[0-7]$/.test(weekday)) return `every ${DAYS[Number(weekday) % 7]} ${at}`;
  if (day === "*" && weekday === "1-5") return `every weekday ${at}`;
  if (number.test(day) && weekday === "*") return `on day ${Number(day)} of every month ${at}`;
  return null;
}
