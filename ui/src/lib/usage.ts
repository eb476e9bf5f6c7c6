// The usage chart's arithmetic: stacked bars per day (one segment per key) of tokens or cost,
// from the engine's `usage_chart`. A cost the engine could not know (`null`: a model without
// a price) stays unknown — the day's bar is marked, never filled with a guess.
import type { UsageChart, UsageRow } from './types';

export type UsageMetric = 'tokens' | 'cost';

export interface Segment {
  profile: string;
  label: string;
  /** Tokens, or USD; `null` when the cost is unknown. */
  value: number | null;
  /** Index of the key in the chart's series (its colour). */
  index: number;
}

export interface DayBar {
  day: string;
  segments: Segment[];
  /** Sum of the segments; `null` when any is unknown. */
  total: number | null;
}

/** Tokens of a row: input + output + cache read + cache write, as reported. */
export function rowTokens(r: Pick<UsageRow, 'input_tokens' | 'output_tokens' | 'cache_read_tokens' | 'cache_write_tokens'>): number {
  return r.input_tokens + r.output_tokens + r.cache_read_tokens + r.cache_write_tokens;
}

/** One bar per day of the chart, a segment per key with usage that day. */
export function dayBars(chart: UsageChart, metric: UsageMetric): DayBar[] {
  return chart.days.map((day, d) => {
    const segments: Segment[] = [];
    chart.series.forEach((s, index) => {
      const cell = s.days[d];
      if (!cell || cell.requests === 0) return;
      const value = metric === 'tokens' ? rowTokens(cell) : cell.cost_usd;
      segments.push({ profile: s.profile, label: s.label || s.profile, value, index });
    });
    const total = segments.some((s) => s.value === null) ? null : segments.reduce((sum, s) => sum + (s.value ?? 0), 0);
    return { day, segments, total };
  });
}

/** The tallest known bar (at least 1, so empty charts scale). */
export function scaleMax(bars: DayBar[]): number {
  return Math.max(1, ...bars.map((b) => b.segments.reduce((sum, s) => sum + (s.value ?? 0), 0)));
}

/** USD for people: `unknown` for `null`, cents under a dollar to 4 places. */
export function usdText(v: number | null): string {
  if (v === null) return 'unknown';
  if (v !== 0 && Math.abs(v) < 1) return `$${v.toFixed(4)}`;
  return `$${v.toFixed(2)}`;
}

/** Token counts for people: 950, 12.3k, 4.5M. */
export function tokenText(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 10_000) return `${(n / 1000).toFixed(1)}k`;
  return n.toLocaleString('en-US');
}

/** `MM-DD` of a `YYYY-MM-DD` day, for the axis. */
export function dayLabel(day: string): string {
  return day.slice(5);
}
