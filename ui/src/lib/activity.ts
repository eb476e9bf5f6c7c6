// The attempt ledger for people: which profile served each turn, traffic share per profile
// against its weight over the last N turns, failover and restore events, and short cells.
import { failureKindText } from './format';
import type { AttemptView } from './types';

/** What the chart needs of a profile. */
export interface ShareProfile {
  id: string;
  label: string;
  weight: number;
  enabled: boolean;
}

export interface Share {
  id: string;
  label: string;
  weight: number;
  /** Turns this profile served in the window. */
  turns: number;
  /** Served share, 0–1. */
  share: number;
  /** What the weight asks for among enabled profiles, 0–1. */
  expected: number;
}

export interface ShareReport {
  /** Distinct turns counted (≤ N). */
  turns: number;
  shares: Share[];
}

/** A row's identity across polls. */
export function rowKey(r: Pick<AttemptView, 'at' | 'turn' | 'attempt'>): string {
  return `${r.turn}#${r.attempt}#${r.at}`;
}

export function succeeded(r: Pick<AttemptView, 'status' | 'failure_kind'>): boolean {
  return r.failure_kind === null && r.status !== null && r.status >= 200 && r.status < 300;
}

/**
 * Traffic share of each profile over the newest `n` distinct turns of `rows` (newest first):
 * a turn counts for the profile of its latest successful attempt (or, if none succeeded, its
 * latest attempt). Profiles that no longer exist are listed under their id.
 */
export function turnShares(rows: AttemptView[], profiles: ShareProfile[], n: number): ShareReport {
  const served = new Map<string, { profile: string; ok: boolean; attempt: number }>();
  for (const r of rows) {
    const seen = served.get(r.turn);
    if (!seen) {
      if (served.size >= n) continue;
      served.set(r.turn, { profile: r.profile, ok: succeeded(r), attempt: r.attempt });
      continue;
    }
    const ok = succeeded(r);
    const better = (ok && !seen.ok) || (ok === seen.ok && r.attempt > seen.attempt);
    if (better) served.set(r.turn, { profile: r.profile, ok, attempt: r.attempt });
  }
  const counts = new Map<string, number>();
  for (const { profile } of served.values()) counts.set(profile, (counts.get(profile) ?? 0) + 1);
  const totalWeight = profiles.filter((p) => p.enabled).reduce((s, p) => s + p.weight, 0);
  const turns = served.size;
  const shares: Share[] = profiles.map((p) => ({
    id: p.id,
    label: p.label,
    weight: p.weight,
    turns: counts.get(p.id) ?? 0,
    share: turns === 0 ? 0 : (counts.get(p.id) ?? 0) / turns,
    expected: p.enabled && totalWeight > 0 ? p.weight / totalWeight : 0,
  }));
  for (const [id, c] of counts) {
    if (!profiles.some((p) => p.id === id)) shares.push({ id, label: id, weight: 0, turns: c, share: c / turns, expected: 0 });
  }
  return { turns, shares };
}

export type ActivityEventKind = 'failover' | 'fallback' | 'restore' | 'probe_failed';

export interface ActivityEvent {
  key: string;
  kind: ActivityEventKind;
  at: string;
  model: string | null;
  text: string;
}

/** The failover and restore events among `rows` (newest first), newest first. */
export function activityEvents(rows: AttemptView[], labelOf: (id: string) => string): ActivityEvent[] {
  const byAttempt = new Map(rows.map((r) => [`${r.turn}#${r.attempt}`, r]));
  const out: ActivityEvent[] = [];
  for (const r of rows) {
    const base = { key: rowKey(r), at: r.at, model: r.model };
    if (r.reason.startsWith('failover:')) {
      const kind = r.reason.slice('failover:'.length);
      const before = byAttempt.get(`${r.turn}#${r.attempt - 1}`);
      const from = before ? labelOf(before.profile) : 'the previous profile';
      const outcome = succeeded(r) ? '' : ` (that attempt failed too: ${failureKindText(r.failure_kind) || `HTTP ${r.status}`})`;
      out.push({ ...base, kind: 'failover', text: `Failover to ${labelOf(r.profile)} after ${from}: ${failureKindText(kind)}${outcome}` });
    } else if (r.reason.startsWith('fallback:')) {
      // Recorded on the connection that served: the request's own had no key that could.
      const kind = r.reason.slice('fallback:'.length);
      const outcome = succeeded(r) ? '' : ` (that attempt failed too: ${failureKindText(r.failure_kind) || `HTTP ${r.status}`})`;
      const why = failureKindText(kind) || kind.replaceAll('_', ' ');
      out.push({ ...base, kind: 'fallback', text: `Fallback to ${r.connection} (${labelOf(r.profile)}): the first connection could not serve (${why})${outcome}` });
    } else if (r.reason === 'probe') {
      out.push(
        succeeded(r)
          ? { ...base, kind: 'restore', text: `${labelOf(r.profile)} restored: the recovery probe succeeded` }
          : { ...base, kind: 'probe_failed', text: `${labelOf(r.profile)} still failing: recovery probe got ${failureKindText(r.failure_kind) || `HTTP ${r.status}`}` },
      );
    }
  }
  return out;
}

const REASONS: Record<string, string> = {
  legacy_primary: 'legacy (primary)',
  sticky: 'same turn',
  swrr: 'balanced',
  priority: 'priority',
  probe: 'recovery probe',
};

/** A selection reason in short words. */
export function reasonText(reason: string): string {
  if (reason.startsWith('failover:')) return `failover (${reason.slice('failover:'.length).replaceAll('_', ' ')})`;
  if (reason.startsWith('fallback:')) return `fallback (${reason.slice('fallback:'.length).replaceAll('_', ' ')})`;
  return REASONS[reason] ?? reason.replaceAll('_', ' ');
}

/** "ttfb 120 ms · 340 ms", or what is known. */
export function latencyText(r: Pick<AttemptView, 'ttfb_ms' | 'duration_ms'>): string {
  const parts: string[] = [];
  if (r.ttfb_ms !== null) parts.push(`ttfb ${r.ttfb_ms} ms`);
  if (r.duration_ms !== null) parts.push(`${r.duration_ms} ms`);
  return parts.join(' · ') || '—';
}

/** "12 in · 40 out", or a dash when the provider reported no usage. */
export function tokensText(r: Pick<AttemptView, 'input_tokens' | 'output_tokens'>): string {
  if (r.input_tokens === null && r.output_tokens === null) return '—';
  return `${r.input_tokens ?? 0} in · ${r.output_tokens ?? 0} out`;
}

/** Local wall-clock time with seconds. */
export function timeText(iso: string): string {
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** How many ledger rows to fetch to see `turns` turns (failovers add rows). */
export function fetchLimit(turns: number): number {
  return Math.min(2000, Math.max(200, turns * 4));
}

/** A short, stable tag for a client session (the ledger keeps a hash, never the raw id). */
export function sessionTag(session: string | null | undefined): string {
  return session ? session.slice(0, 6) : '—';
}

/** The turns of each client session among `rows`, so a session's turns can be told together. */
export function sessionTurns(rows: Pick<AttemptView, 'session' | 'turn'>[]): Map<string, number> {
  const turns = new Map<string, Set<string>>();
  for (const r of rows) {
    if (!r.session) continue;
    const set = turns.get(r.session) ?? new Set<string>();
    set.add(r.turn);
    turns.set(r.session, set);
  }
  return new Map([...turns].map(([s, t]) => [s, t.size]));
}
