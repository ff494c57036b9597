// Type-checked with nothing but TypeScript (no @types/node), then compiled and run.
import { FirmQueue, fromKysely, type JobContext } from "firm-queue";

export async function run(file: string): Promise<string> {
  const firm = new FirmQueue({ databaseUrl: `sqlite:${file}`, logLevel: "warn" });
  const said: string[] = [];
  const greet = firm.defineJob<{ name: string }>("greet", async (args, context: JobContext) => {
    const id: number = context.jobId;
    said.push(`hello ${args.name} (${id > 0 ? "job" : "?"})`);
  });
  // @ts-expect-error arguments are typed by the definition
  void (() => greet.enqueue({ name: 42 }));
  void fromKysely;
  await firm.migrate();
  const { id }: { id: number } = await greet.enqueue({ name: "typed" });
  await firm.drain();
  await firm.close();
  return `${said.join(",")} ${typeof id}`;
}
