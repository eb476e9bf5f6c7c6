// The fake engine's usage chart, summed from the fake ledger (`relay.rows`) like the engine
// sums the real one: per UTC day and profile, tokens as recorded; `gpt-a` has a price (3 / 15
// USD per million input / output tokens), any other model's cost is unknown.
import type { IpcError, UsageChart, UsageRow } from '../../src/lib/types';
import type { FakeEngine } from './engine';

function fail(code: IpcError['code'], message: string): never {
  throw { code, message, gates: null } satisfies IpcError;
}

const PRICES: Record<string, [number, number]> = { 'gpt-a': [3, 15] };

function empty(key: string): UsageRow {
  return { key, requests: 0, errors: 0, input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0 };
}

export class FakeUsage {
  constructor(private readonly engine: FakeEngine) {}

  handles(cmd: string): boolean {
    return cmd === 'usage_chart';
  }

  handle(_cmd: string, a: Record<string, never>): UsageChart {
    const slug = a.slug as string;
    const n = a.days as number;
    if (!(n >= 1 && n <= 366)) fail('invalid', 'days: must be between 1 and 366');
    const c = this.engine.connections.find((x) => x.slug === slug) ?? fail('not_found', `connection '${slug}' not found`);
    const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
    const days = Array.from({ length: n }, (_, i) => new Date(today - (n - 1 - i) * 86_400_000).toISOString().slice(0, 10));
    const profiles = this.engine.profiles.filter((p) => p.connectionId === c.id);
    const total = empty('total');
    const series = profiles.map((p) => ({ profile: p.id, label: p.label, days: days.map(empty) }));
    for (const r of this.engine.relay.rows) {
      if (r.connection !== slug) continue;
      const d = days.indexOf(r.at.slice(0, 10));
      const s = series.find((x) => x.profile === r.profile);
      if (d < 0 || !s) continue;
      for (const row of [s.days[d], total]) add(row, r.model, r.status, r.input_tokens, r.output_tokens);
    }
    return { slug, time_zone: 'UTC', days, series, total, complete: total.cost_usd !== null };
  }
}

function add(row: UsageRow, model: string | null, status: number | null, input: number | null, output: number | null) {
  row.requests += 1;
  if (status === null || status >= 300) row.errors += 1;
  row.input_tokens += input ?? 0;
  row.output_tokens += output ?? 0;
  const price = model ? PRICES[model] : undefined;
  const tokens = (input ?? 0) + (output ?? 0);
  const cost = tokens === 0 ? 0 : price ? ((input ?? 0) * price[0] + (output ?? 0) * price[1]) / 1e6 : null;
  row.cost_usd = row.cost_usd === null || cost === null ? null : row.cost_usd + cost;
}
