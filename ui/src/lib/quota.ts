// Quota gauges in words: what one limit reading says (remaining of a limit, or the share used),
// never a guess where the provider said nothing, and nothing but "stale" once its window reset;
// a subscription window's kind (5-hour, weekly, a model family's weekly, Codex's), the provider's
// status as a colour, and the forecast "runs out" when the engine made one.
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

/** A Codex window of a length we do not know, with its length. */
function minutesText(m: number | null | undefined): string {
  if (!m) return '';
  return m % 1440 === 0 ? ` (${m / 1440} d)` : m % 60 === 0 ? ` (${m / 60} h)` : ` (${m} min)`;
}

/** A subscription window by its kind (a Codex 300-minute window is a 5-hour window too). */
function kindName(w: Pick<QuotaWindowView, 'kind' | 'family' | 'window_minutes'>): string | null {
  switch (w.kind) {
    case 'five_hour':
      return '5-hour window';
    case 'seven_day':
      return 'weekly window';
    case 'seven_day_model':
      return w.family ? `weekly ${w.family} window` : 'weekly model window';
    case 'codex_primary':
      return `Codex primary window${minutesText(w.window_minutes)}`;
    case 'codex_secondary':
      return `Codex secondary window${minutesText(w.window_minutes)}`;
    default:
      return null;
  }
}

/** The window's name (by kind for subscription windows), with its model when it is per model. */
export function windowLabel(w: Pick<QuotaWindowView, 'name' | 'model' | 'kind' | 'family' | 'window_minutes'>): string {
  const name = kindName(w) ?? NAMES[w.name] ?? w.name.replaceAll('_', ' ');
  return w.model ? `${name} · ${w.model}` : name;
}

/** The provider's status word as a colour: `allowed` ok, `allowed_warning` warn, `rejected` bad. */
export function statusTone(status: string | null | undefined): 'ok' | 'warn' | 'bad' | 'none' {
  switch (status) {
    case 'allowed':
      return 'ok';
    case 'allowed_warning':
      return 'warn';
    case 'rejected':
      return 'bad';
    default:
      return 'none';
  }
}

/** The provider's status word for people: `rejected` is a window whose limit is reached. */
export function statusText(status: string): string {
  switch (status) {
    case 'allowed_warning':
      return 'close to the limit';
    case 'rejected':
      return 'limit reached';
    default:
      return status.replaceAll('_', ' ');
  }
}

/** "Tue 14:05" for a time, in the engine's words when it sent them, else the window's own locale. */
export function atText(iso: string, local: string | null | undefined): string {
  if (local) return local;
  const d = new Date(iso);
  return `${d.toLocaleDateString('en-US', { weekday: 'short' })} ${d.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' })}`;
}

/** The forecast in words: when the window runs out at the last hour's rate, or `null` when it does not before its reset. */
export function forecastText(w: Pick<QuotaWindowView, 'exhausts_at' | 'exhausts_local' | 'stale' | 'status'>): string | null {
  if (!w.exhausts_at || w.stale || w.status === 'rejected') return null;
  return `runs out ${atText(w.exhausts_at, w.exhausts_local)} at this rate`;
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
