// Keeps memory bounded by bytes, not only by row counts: runs range from a few hundred bytes to megabytes of
// inputs, and a page or row group of 5,000 large runs would not fit. The size of a run is estimated from a
// sample (its JSON length), cheap enough to leave the export's throughput alone.

const SAMPLE_EVERY = 50;
/** Rows asked for before any size is known. */
const FIRST_PAGE_ROWS = 100;

export class RowSizeEstimate {
  #samples = 0;
  #average = 0;

  observe(rows: readonly object[]): void {
    for (let i = 0; i < rows.length; i += SAMPLE_EVERY) {
      let size: number;
      try {
        size = JSON.stringify(rows[i]).length;
      } catch {
        size = 1024;
      }
      // A moving average follows a project whose runs grow or shrink over the day.
      this.#average = this.#samples === 0 ? size : this.#average * 0.8 + size * 0.2;
      this.#samples += 1;
    }
  }

  /** How many rows fit in `budgetBytes`, between 1 and `maxRows`. */
  rowsWithin(budgetBytes: number, maxRows: number): number {
    if (this.#samples === 0) return Math.min(maxRows, FIRST_PAGE_ROWS);
    return Math.max(1, Math.min(maxRows, Math.floor(budgetBytes / Math.max(this.#average, 1))));
  }
}
