import { describe, expect, it } from "vitest";
import { DatabaseClock } from "../src/database/clock.js";

/**
 * A host and a database server in simulated time: `real` runs for both, the host's wall clock is
 * `hostError` ms off it and the server's `databaseError`; each read of the database's time takes
 * `up` ms to reach the server and `down` ms to come back.
 */
function simulated(legs: { up: number; down: number }[]) {
  const world = { real: 1_000_000, hostError: 0, databaseError: 5_000 };
  let read = 0;
  const clock = new DatabaseClock(
    async () => {
      const { up, down } = legs[Math.min(read++, legs.length - 1)]!;
      world.real += up;
      const serverTime = world.real + world.databaseError;
      world.real += down;
      return new Date(serverTime);
    },
    { wall: () => world.real + world.hostError, monotonic: () => world.real },
  );
  const trueOffset = () => world.databaseError - world.hostError;
  const error = () => Math.abs(clock.offsetMs - trueOffset());
  return { world, clock, error };
}

describe("the database clock's offset", () => {
  it("keeps a precise measurement when a later round trip is slow and lopsided", async () => {
    // 1 ms round trip, then 400 ms spent almost all on the way back (a stalled event loop).
    const { clock, error } = simulated([
      { up: 0.5, down: 0.5 },
      { up: 5, down: 395 },
    ]);
    await clock.sync();
    expect(error()).toBeLessThanOrEqual(0.5);
    await clock.sync();
    // Taken at face value the slow one would be 195 ms off.
    expect(error()).toBeLessThanOrEqual(0.5);
    expect(clock.uncertaintyMs).toBeLessThan(1);
  });

  it("takes a more precise measurement over a slow first one (the connection's opening)", async () => {
    const { clock, error } = simulated([
      { up: 150, down: 10 },
      { up: 1, down: 1 },
    ]);
    await clock.sync();
    expect(error()).toBeGreaterThan(50);
    await clock.sync();
    expect(error()).toBeLessThanOrEqual(1);
  });

  it("follows a host clock stepped by minutes, even through a slow round trip", async () => {
    const { world, clock, error } = simulated([
      { up: 0.5, down: 0.5 },
      { up: 100, down: 100 },
    ]);
    await clock.sync();
    world.hostError = -10 * 60_000; // the host's clock jumps 10 minutes back
    await clock.sync();
    expect(error()).toBeLessThanOrEqual(100);
  });

  it("lets a kept measurement age, so a drifting clock is measured again", async () => {
    const { world, clock } = simulated([
      { up: 0.5, down: 0.5 },
      { up: 20, down: 20 },
    ]);
    await clock.sync();
    const first = clock.offsetMs;
    world.real += 2 * 3_600_000; // two hours later (100 ppm: the kept bound has grown by 720 ms)
    world.databaseError += 30; // the clocks drifted 30 ms apart, within the slow read's range
    await clock.sync();
    expect(clock.offsetMs).not.toBe(first);
    expect(Math.abs(clock.offsetMs - (world.databaseError - world.hostError))).toBeLessThanOrEqual(20);
  });

  it("keeps the offset when a read fails, and adds what advance() moved", async () => {
    let fail = false;
    const clock = new DatabaseClock(async () => {
      if (fail) throw new Error("down");
      return new Date(Date.now() + 60_000);
    });
    await clock.sync();
    const offset = clock.offsetMs;
    expect(Math.abs(offset - 60_000)).toBeLessThan(1_000);
    fail = true;
    await expect(clock.sync()).rejects.toThrow("down");
    expect(clock.offsetMs).toBe(offset);
    clock.advance(5_000);
    expect(Math.abs(clock.now().getTime() - (Date.now() + offset + 5_000))).toBeLessThan(50);
  });
});
