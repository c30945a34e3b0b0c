/** Plain-text output of the CLI: tables that fit the terminal, CSV, durations. */

const MIN_FLEXIBLE = 12;

/** Width for tables: the terminal's, or unlimited when the output goes to a file or a pipe (scripts get every character). */
export function tableColumns(stream: NodeJS.WriteStream = process.stdout): number {
  return stream.isTTY ? stream.columns || 80 : Number.POSITIVE_INFINITY;
}

/**
 * Columns padded to their widest cell; when the table is wider than `columns`, the column named
 * `flexible` is cut (with …) to fit, down to MIN_FLEXIBLE characters.
 */
export function table(headers: string[], rows: string[][], columns: number, flexible = 1): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const total = widths.reduce((a, b) => a + b, 0) + 2 * (widths.length - 1);
  if (total > columns - 1) widths[flexible] = Math.max(Math.min(widths[flexible], MIN_FLEXIBLE), widths[flexible] - (total - (columns - 1)));
  const cell = (text: string, i: number) => (text.length > widths[i] ? `${text.slice(0, Math.max(0, widths[i] - 1))}…` : text.padEnd(widths[i]));
  return [headers, ...rows].map((r) => r.map(cell).join('  ').trimEnd()).join('\n');
}

/** RFC 4180 CSV: fields with commas, quotes or newlines are quoted. */
export function csv(rows: (string | number | null | undefined)[][]): string {
  const field = (value: string | number | null | undefined) => {
    const text = value === null || value === undefined ? '' : String(value);
    return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return rows.map((r) => r.map(field).join(',')).join('\n') + '\n';
}

export function ago(iso: string | null): string {
  if (!iso) return '-';
  const seconds = Math.max(0, (Date.now() - new Date(iso).getTime()) / 1000);
  if (seconds < 60) return `${Math.round(seconds)}s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)}m ago`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)}h ago`;
  return `${Math.round(seconds / 86_400)}d ago`;
}

export function metric(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '-';
  if (value !== 0 && Math.abs(value) < 1e-3) return value.toExponential(2);
  return String(Number(value.toFixed(4)));
}
