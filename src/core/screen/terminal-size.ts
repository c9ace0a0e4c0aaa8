/** A PTY's size when the model gives none: wider than Codex's 80×24, so tables and progress bars stay whole; clamps keep a typo from an absurd screen. */
export const DEFAULT_COLS = 120;
export const DEFAULT_ROWS = 30;
export const MIN_COLS = 20;
export const MAX_COLS = 500;
export const MIN_ROWS = 5;
export const MAX_ROWS = 300;

/** A PTY's size, and what the caller asked for where it was clamped. */
export interface TerminalSize {
  cols: number;
  rows: number;
  requestedCols?: number;
  requestedRows?: number;
}

function clampDimension(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.round(value)));
}

/**
 * The size to use: each given dimension clamped (cols to [20, 500], rows to [5, 300]); a missing one
 * keeps `current` (a resize may change just one), or the default for a new PTY.
 */
export function terminalSize(cols: number | undefined, rows: number | undefined, current?: { cols: number; rows: number }): TerminalSize {
  const size: TerminalSize = {
    cols: cols === undefined ? (current?.cols ?? DEFAULT_COLS) : clampDimension(cols, MIN_COLS, MAX_COLS),
    rows: rows === undefined ? (current?.rows ?? DEFAULT_ROWS) : clampDimension(rows, MIN_ROWS, MAX_ROWS),
  };
  if (cols !== undefined && size.cols !== cols) size.requestedCols = cols;
  if (rows !== undefined && size.rows !== rows) size.requestedRows = rows;
  return size;
}
