import { run } from "./typed.mjs";

declare const process: { argv: string[] };
console.log(await run(process.argv[2]!));
