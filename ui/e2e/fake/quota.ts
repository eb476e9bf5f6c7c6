// The fake engine's quota readings, as the relay would have written them from limit headers:
// tests put readings on a profile (by label) with times relative to now; `quota` answers with
// their age, the seconds to their reset and staleness computed at the call, like the engine.
import type { IpcError, QuotaView, QuotaWindowView } from '../../src/lib/types';
import type { FakeEngine } from './engine';

function fail(code: IpcError['code'], message: string): never {
  throw { code, message, gates: null } satisfies IpcError;
}

/** One stored reading; `seenAt` / `resetsAt` are epoch milliseconds. */
export interface FakeReading {
  name: string;
  model?: string | null;
  limit?: number | null;
  remaining?: number | null;
  utilization?: number | null;
  status?: string | null;
  windowMinutes?: number | null;
  seenAt: number;
  resetsAt?: number | null;
}

export class FakeQuota {
  /** Readings by profile id. */
  readings = new Map<string, FakeReading[]>();

  constructor(private readonly engine: FakeEngine) {}

  handles(cmd: string): boolean {
    return cmd === 'quota';
  }

  /** Replaces the readings of the profile labelled `label` of `slug`. */
  set(slug: string, label: string, readings: FakeReading[]): void {
    const c = this.engine.connections.find((x) => x.slug === slug) ?? fail('not_found', `connection '${slug}' not found`);
    const p = this.engine.profiles.find((x) => x.connectionId === c.id && x.label === label) ?? fail('not_found', `profile '${label}' not found`);
    this.readings.set(p.id, readings);
  }

  handle(_cmd: string, a: Record<string, never>): QuotaView {
    const slug = a.slug as string;
    const c = this.engine.connections.find((x) => x.slug === slug) ?? fail('not_found', `connection '${slug}' not found`);
    const now = Date.now();
    const profiles = this.engine.profiles
      .filter((p) => p.connectionId === c.id)
      .sort((x, y) => x.priority - y.priority || x.id.localeCompare(y.id))
      .map((p) => ({ id: p.id, label: p.label, windows: (this.readings.get(p.id) ?? []).map((r) => view(r, now)) }));
    return { slug: c.slug, time_zone: 'UTC', profiles };
  }
}

function view(r: FakeReading, now: number): QuotaWindowView {
  const resetsAt = r.resetsAt ?? null;
  return {
    name: r.name,
    kind: KINDS[r.name] ?? 'requests',
    model: r.model ?? null,
    family: null,
    limit: r.limit ?? null,
    remaining: r.remaining ?? null,
    utilization: r.utilization ?? null,
    resets_at: resetsAt === null ? null : new Date(resetsAt).toISOString(),
    seen_at: new Date(r.seenAt).toISOString(),
    status: r.status ?? null,
    window_minutes: r.windowMinutes ?? null,
    age_secs: Math.floor(Math.max(0, now - r.seenAt) / 1000),
    resets_in_secs: resetsAt === null ? null : Math.floor((resetsAt - now) / 1000),
    stale: resetsAt !== null && resetsAt <= now,
    binding: false,
    exhausts_at: null,
    exhausts_in_secs: null,
    resets_local: null,
    exhausts_local: null,
  };
}

/** The engine's window kinds by name (`providers/src/quota/kind.rs`), for the names the fake uses. */
const KINDS: Record<string, string> = {
  unified: 'overall',
  unified_5h: 'five_hour',
  unified_7d: 'seven_day',
  codex_5h: 'five_hour',
  codex_7d: 'seven_day',
  codex_primary: 'codex_primary',
  codex_secondary: 'codex_secondary',
  tokens: 'tokens',
  input_tokens: 'tokens',
  output_tokens: 'tokens',
};
