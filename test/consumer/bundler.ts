// Type-checked under moduleResolution "bundler".
import { FirmQueue, type EnqueueOptions } from "firm-queue";

const firm = new FirmQueue({ databaseUrl: "sqlite::memory:" });
const job = firm.defineJob<{ n: number }>("count", async (args) => void args.n.toFixed());
const options: EnqueueOptions = { queue: "default", wait: "1s" };
export const enqueued: Promise<number> = job.enqueue({ n: 1 }, options).then((result) => result.id);
