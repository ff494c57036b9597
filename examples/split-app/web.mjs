// The web process: enqueues receipts and nothing else. It imports the declarations only.
//   DATABASE_URL=sqlite:shop.sqlite3 node examples/split-app/web.mjs
//   DATABASE_URL=sqlite:shop.sqlite3 npx firm-queue start --require examples/split-app/worker.mjs
//   curl -X POST localhost:3000/receipts -H 'content-type: application/json' -d '{"orderId":"o-1","email":"ada@example.com"}'
import { createServer } from "node:http";
import { InvalidJobArgumentsError } from "firm-queue";
import { firm, sendReceipt } from "./declarations.mjs";

await firm.migrate();

const server = createServer(async (request, response) => {
  const reply = (status, body) => {
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  };
  if (request.method !== "POST" || request.url !== "/receipts") return reply(404, { error: "not found" });
  let body = "";
  for await (const chunk of request) body += chunk;
  try {
    const { id: jobId } = await sendReceipt.enqueue(JSON.parse(body || "null"));
    reply(201, { jobId });
  } catch (error) {
    // The schema refused the arguments: nothing was written.
    if (error instanceof InvalidJobArgumentsError) return reply(400, { error: error.message, issues: error.issues });
    reply(500, { error: String(error) });
  }
});

server.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});

for (const signal of ["SIGTERM", "SIGINT"]) process.once(signal, () => server.close(() => firm.close()));
