// Quota gauges in words: what one limit reading says (remaining of a limit, or the share used),
// never a guess where the provider said nothing, and nothing but "stale" once its window reset.
import type { QuotaWindowView } from './types';

/** Below this share remaining a gauge is shown in the warning colour. */
export const QUOTA_RESERVE = 0.1;

export type Gauge =
  | { kind: 'stale' }
  | { kind: 'unknown' }
  /** Remaining known, limit not: a count without a bar. */
  | { kind: 'left'; remaining: number; low: boolean }
  /** `left` is the share remaining, 0..1, for the bar. */
  | { kind: 'count'; remaining: number; limit: number; left: number; low: boolean }
  | { kind: 'used'; used: number; left: number; low: boolean };

/** Whether the reading no longer holds at `nowMs`: the engine said so, or its reset has passed since. */
export function isStale(w: Pick<QuotaWindowView, 'stale' | 'resets_at'>, nowMs: number): boolean {
  return w.stale || (w.resets_at != null && Date.parse(w.resets_at) <= nowMs);
}

/** What the gauge of one window shows at `nowMs`. */
export function gauge(w: QuotaWindowView, nowMs: number): Gauge {
  if (isStale(w, nowMs)) return { kind: 'stale' };
  const rejected = w.status === 'rejected';
  if (w.remaining != null && w.limit != null && w.limit > 0) {
    const left = Math.min(1, Math.max(0, w.remaining / w.limit));
    return { kind: 'count', remaining: w.remaining, limit: w.limit, left, low: rejected || left < QUOTA_RESERVE };
  }
  if (w.utilization != null) {
    const used = Math.min(1, Math.max(0, w.utilization));
    return { kind: 'used', used, left: 1 - used, low: rejected || 1 - used < QUOTA_RESERVE };
  }
  if (w.remaining != null) return { kind: 'left', remaining: w.remaining, low: rejected || w.remaining === 0 };
  return { kind: 'unknown' };
}

/** The gauge's numbers in words. */
export function gaugeText(g: Gauge): string {
  switch (g.kind) {
    case 'stale':
      return 'stale — the window has reset since this reading';
    case 'unknown':
      return 'unknown';
    case 'left':
      return `${g.remaining.toLocaleString('en-US')} left (limit unknown)`;
    case 'count':
      return `${g.remaining.toLocaleString('en-US')} / ${g.limit.toLocaleString('en-US')} left`;
    case 'used':
      return `${Math.round(g.used * 100)}% used`;
  }
}

const NAMES: Record<string, string> = {
  requests: 'requests',
  tokens: 'tokens',
  input_tokens: 'input tokens',
  output_tokens: 'output tokens',
  unified: 'subscription',
  unified_5h: '5-hour window',
  unified_7d: '7-day window',
  codex_primary: 'Codex primary window',
  codex_secondary: 'Codex secondary window',
};

/** The window's name, with its model when it is per model. */
export function windowLabel(w: Pick<QuotaWindowView, 'name' | 'model'>): string {
  const name = NAMES[w.name] ?? w.name.replaceAll('_', ' ');
  return w.model ? `${name} · ${w.model}` : name;
}

/** "as of just now", "as of 4 min ago", "as of 3 h ago" from the reading's age. */
export function asOfText(ageSecs: number): string {
  const secs = Math.max(0, ageSecs);
  if (secs < 60) return 'as of just now';
  const mins = Math.floor(secs / 60);
  if (mins < 60) return `as of ${mins} min ago`;
  const hours = Math.floor(mins / 60);
  if (hours < 48) return `as of ${hours} h ago`;
  return `as of ${Math.floor(hours / 24)} days ago`;
}

/** A stable key of a window within a profile. */
export function windowKey(w: Pick<QuotaWindowView, 'name' | 'model'>): string {
  return `${w.name}|${w.model ?? ''}`;
}
