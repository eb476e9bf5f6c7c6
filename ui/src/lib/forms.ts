// Form text to command inputs: split lists, drop blanks. The engine validates the values.
import type { ConnectionView } from './types';

export interface HeaderRow {
  name: string;
  value: string;
}

export interface ConnectionFormValues {
  slug: string;
  protocol: string;
  baseUrl: string;
  /** Comma- or newline-separated model ids. */
  models: string;
  /** One `FROM=TO` per line. */
  mappings: string;
  headers: HeaderRow[];
}

/** Items separated by commas or new lines, trimmed, blanks dropped. */
export function splitList(text: string): string[] {
  return text
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** One item per line, trimmed, blanks dropped. */
export function splitLines(text: string): string[] {
  return text
    .split('\n')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** Header rows as `Name: value` lines; rows without a name are dropped. */
export function headerLines(rows: HeaderRow[]): string[] {
  return rows.filter((r) => r.name.trim().length > 0).map((r) => `${r.name.trim()}: ${r.value.trim()}`);
}

/** The form filled from an existing connection. */
export function formFromConnection(c: ConnectionView): ConnectionFormValues {
  return {
    slug: c.slug,
    protocol: c.protocol,
    baseUrl: c.base_url,
    models: c.models.join(', '),
    mappings: c.mapping.map((m) => `${m.from}=${m.to}`).join('\n'),
    headers: c.headers.map((h) => ({ name: h.name, value: h.value })),
  };
}

export function emptyConnectionForm(): ConnectionFormValues {
  return { slug: '', protocol: 'openai', baseUrl: '', models: '', mappings: '', headers: [] };
}

/** A pasted key without the surrounding whitespace or line breaks a copy often brings. */
export function cleanSecret(raw: string): string {
  return raw.trim();
}

/** A whole number from a number field, or `null` when empty or not a number. */
export function toInt(raw: string | number | null | undefined): number | null {
  if (raw === null || raw === undefined || raw === '') return null;
  const n = typeof raw === 'number' ? raw : Number(raw);
  return Number.isInteger(n) ? n : null;
}
