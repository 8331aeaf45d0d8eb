import type { TeamCell, TeamTable } from './teamSchema';

/**
 * One team table's rows held as columns: per column of the table's schema one array of
 * cells, and per row the Hive partition it belongs to (agent, UTC day) and its session's
 * position in the trace. The export reads the tables a column at a time (the Parquet writer,
 * the redaction request): with a row object per row, each of those reads was a property
 * looked up by a name that changes from column to column, for every cell of the export
 * (docs/performance.md, "Issue 30, seventeenth session").
 */
export class TeamColumns {
  /** Per row: its agent partition value (partitionValue). */
  readonly agent: string[] = [];
  /** Per row: its UTC day `YYYY-MM-DD`, or null when it has no time. */
  readonly date: Array<string | null> = [];
  /** Per row: its session's position in the trace (not a column: the OTLP export links calls and sub-agents by it). */
  readonly session: number[] = [];
  /** Per column, in the schema's order: one cell per row. */
  readonly cells: TeamCell[][];
  private readonly names: readonly string[];
  private readonly position = new Map<string, number>();

  constructor(readonly table: TeamTable) {
    this.names = table.columns.map((c) => c.name);
    this.cells = this.names.map(() => []);
    this.names.forEach((name, j) => this.position.set(name, j));
  }

  /** How many rows. */
  get length(): number {
    return this.session.length;
  }

  /**
   * Adds a row from an object literal that lists every column of the table in the schema's
   * order: copied by position, without a lookup per cell. Every row appended here must come
   * from one such literal (the row builders' own: one literal per table, its keys fixed), so
   * the keys are checked on the first row only; any other object goes to appendByName.
   */
  append(agent: string, date: string | null, session: number, cells: Readonly<Record<string, TeamCell>>): void {
    const values = Object.values(cells);
    const columns = this.cells;
    if (this.session.length === 0 || values.length !== columns.length) this.checkOrder(cells);
    for (let j = 0; j < values.length; j++) columns[j]!.push(values[j] ?? null);
    this.partition(agent, date, session);
  }

  private checkOrder(cells: Readonly<Record<string, TeamCell>>): void {
    const keys = Object.keys(cells);
    if (keys.length !== this.names.length || keys.some((k, j) => k !== this.names[j]))
      throw new Error(`a ${this.table.name} row's cells are not the table's columns in order: ${keys.join(', ')}`);
  }

  /** Adds a row from its cells by column name, in any order; a column left out is null, a name the table lacks an error. */
  appendByName(agent: string, date: string | null, session: number, cells: Readonly<Record<string, TeamCell>>): void {
    for (const key of Object.keys(cells))
      if (!this.position.has(key)) throw new Error(`the ${this.table.name} table has no column ${key}`);
    this.names.forEach((name, j) => this.cells[j]!.push(cells[name] ?? null));
    this.partition(agent, date, session);
  }

  private partition(agent: string, date: string | null, session: number): void {
    this.agent.push(agent);
    this.date.push(date);
    this.session.push(session);
  }

  /** A column's cells, by the column's name. */
  column(name: string): TeamCell[] {
    const j = this.position.get(name);
    if (j === undefined) throw new Error(`the ${this.table.name} table has no column ${name}`);
    return this.cells[j]!;
  }

  /** One cell, by row and column name (for code that reads a few cells of a row). */
  cell(row: number, name: string): TeamCell {
    return this.column(name)[row] ?? null;
  }

  /** One row's cells by column name (tests, and code that wants a row as an object). */
  row(row: number): Record<string, TeamCell> {
    const out: Record<string, TeamCell> = {};
    this.names.forEach((name, j) => {
      out[name] = this.cells[j]![row] ?? null;
    });
    return out;
  }

  /** The rows at these positions, in this order, as a table of their own. */
  select(rows: readonly number[]): TeamColumns {
    const out = new TeamColumns(this.table);
    for (const i of rows) {
      out.agent.push(this.agent[i]!);
      out.date.push(this.date[i]!);
      out.session.push(this.session[i]!);
    }
    this.cells.forEach((column, j) => {
      const to = out.cells[j]!;
      for (const i of rows) to.push(column[i]!);
    });
    return out;
  }
}
