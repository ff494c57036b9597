/**
 * Run `runBatch` until a batch comes back short of `batchSize` (nothing more to do), and return
 * the sum of what the batches did. For work done in small transactions, so that locks stay brief.
 */
export async function repeatBatches(batchSize: number, runBatch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const done = await runBatch();
    total += done;
    if (done < batchSize) return total;
  }
}
