/**
 * Rows of a long list fetched from the host by page, as the page needs them (a tooltip,
 * the selection, the rows a table shows), and kept. `onArrive` runs when a page lands so
 * whatever waited for it redraws. A cleared cache drops late answers.
 */
export class RowCache<T> {
  private readonly pages = new Map<number, T[] | 'loading'>();
  private generation = 0;

  constructor(
    private readonly fetch: (from: number, count: number) => Promise<T[]>,
    private readonly pageSize: number,
    private readonly onArrive: () => void,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  /** The row, if its page is here. */
  get(index: number): T | undefined {
    const page = this.pages.get(Math.floor(index / this.pageSize));
    return Array.isArray(page) ? page[index % this.pageSize] : undefined;
  }

  /** Fetches the pages of rows [first, last] not here yet. */
  ensure(first: number, last: number): void {
    if (last < first) return;
    for (let p = Math.floor(Math.max(0, first) / this.pageSize); p <= Math.floor(last / this.pageSize); p++) {
      if (this.pages.has(p)) continue;
      this.pages.set(p, 'loading');
      const generation = this.generation;
      this.fetch(p * this.pageSize, this.pageSize).then(
        (rows) => {
          if (generation !== this.generation) return;
          this.pages.set(p, rows);
          this.onArrive();
        },
        (e: unknown) => {
          if (generation !== this.generation) return;
          // Not kept: asking again retries.
          this.pages.delete(p);
          this.onError(e);
        },
      );
    }
  }

  /** Resolves with the row once its page is here. */
  async row(index: number): Promise<T | undefined> {
    const have = this.get(index);
    if (have !== undefined) return have;
    const generation = this.generation;
    const page = Math.floor(index / this.pageSize);
    this.pages.delete(page);
    const rows = await this.fetch(page * this.pageSize, this.pageSize);
    if (generation !== this.generation) return undefined;
    this.pages.set(page, rows);
    this.onArrive();
    return rows[index % this.pageSize];
  }

  clear(): void {
    this.generation += 1;
    this.pages.clear();
  }
}
