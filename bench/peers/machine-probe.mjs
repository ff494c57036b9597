// How fast the machine runs at a given moment: a fixed piece of work of the kind a worker does
// (small objects through JSON), timed. On a shared or virtual machine the same code can run at
// two speeds minutes apart; a run whose probe is slow ran on a slower machine, whatever the system
// under test did. Reported beside each processing run (see ./worker-process.mjs).

/** Objects per repetition: about 10 ms of work on a 2-core development VM. */
const OBJECTS = 20_000;
const REPETITIONS = 5;

/**
 * Milliseconds the fixed work takes now: the fastest of a few repetitions, so that one collection
 * or interruption does not count, while a machine slow for the whole probe shows in every one.
 */
export function probeMs() {
  let fastest = Number.POSITIVE_INFINITY;
  for (let repetition = 0; repetition < REPETITIONS; repetition++) {
    const started = performance.now();
    fixedWork();
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest;
}

/** Returns a sum so that the work cannot be left out. */
function fixedWork() {
  let sum = 0;
  for (let i = 0; i < OBJECTS; i++) {
    const copy = JSON.parse(JSON.stringify({ id: i, name: "noop", args: [i, i * 2], at: "2026-01-01T00:00:00.000Z" }));
    sum += copy.args[1];
  }
  return sum;
}
