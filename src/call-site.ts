import { dirname, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** firm-queue's own directory (src/ or dist/): frames inside it are not the caller. */
const OWN_DIRECTORY = dirname(fileURLToPath(import.meta.url)) + sep;
const LOCATION = /(?:\(|at )((?:file:\/\/)?\/[^()]*?):\d+:\d+\)?\s*$/;

/**
 * The file of the code that called into firm-queue, read from the stack: the first frame outside
 * this package that names a file. Fork mode imports these files in each child so the children
 * know the same job definitions. Undefined when no such frame is found (e.g. called from a REPL).
 */
export function callerFile(): string | undefined {
  const frames = new Error().stack?.split("\n").slice(1) ?? [];
  for (const frame of frames) {
    const match = LOCATION.exec(frame);
    if (!match) continue;
    const location = match[1]!;
    const file = location.startsWith("file://") ? fileURLToPath(location) : location;
    if (file.startsWith(OWN_DIRECTORY) || file.includes(`${sep}node_modules${sep}jiti${sep}`)) continue;
    return file;
  }
  return undefined;
}
