/** A plain-text table: the first row is the header; columns after the first are right-aligned. */
export function textTable(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows)
    row.forEach((cell, column) => {
      widths[column] = Math.max(widths[column] ?? 0, cell.length);
    });
  const line = (row: readonly string[]) =>
    row
      .map((cell, column) =>
        column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0),
      )
      .join('  ');
  const [header, ...body] = rows;
  if (!header) return '';
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  return [line(header), rule, ...body.map(line)].join('\n');
}

/** `value` with `digits` decimals, or fewer as it grows: 2,396 / 67.3 / 4.65. */
export function figure(value: number): string {
  if (!Number.isFinite(value)) return '-';
  const digits = value >= 1000 ? 0 : value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}
