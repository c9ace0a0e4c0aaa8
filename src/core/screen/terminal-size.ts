import { DEFAULT_COLS, DEFAULT_ROWS, MAX_COLS, MAX_ROWS, MIN_COLS, MIN_ROWS } from "../shared/constants.ts";

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
