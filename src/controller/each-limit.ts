// Bounded concurrency: the cluster target's requests within a stage, and status writes.

/** Runs `fn` on every item with at most `limit` in flight; the first error is thrown. */
export async function eachLimit<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed: Error | undefined;
  const worker = async () => {
    while (next < items.length && failed === undefined) {
      const item = items[next++] as T;
      try {
        await fn(item);
      } catch (err) {
        failed ??= err instanceof Error ? err : new Error(String(err));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed !== undefined) throw failed;
}
