import { render, screen, within } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import { asOfText, gauge, QUOTA_RESERVE } from './quota';
import QuotaCell from './QuotaCell.svelte';
import type { QuotaWindowView } from './types';

const NOW = Date.now();
const iso = (ms: number) => new Date(ms).toISOString();

function reading(over: Partial<QuotaWindowView> = {}): QuotaWindowView {
  return {
    name: 'requests', kind: 'requests', model: 'gpt-a', family: null, binding: false, exhausts_at: null, exhausts_in_secs: null,
    resets_local: null, exhausts_local: null, limit: null, remaining: null, utilization: null, resets_at: null,
    seen_at: iso(NOW - 240_000), status: null, window_minutes: null, age_secs: 240, resets_in_secs: null, stale: false, ...over,
  };
}

function cell(windows: QuotaWindowView[]) {
  render(QuotaCell, { quota: { id: 'p_1', label: 'a', windows } });
  return screen.getAllByTestId('quota-gauge');
}

describe('quota gauges', () => {
  it('shows remaining of the limit, the reset countdown and the age', () => {
    const [g] = cell([reading({ limit: 50, remaining: 37, resets_at: iso(NOW + 42_000), resets_in_secs: 42 })]);
    expect(within(g).getByTestId('quota-value').textContent).toBe('37 / 50 left');
    expect(g.textContent).toContain('requests · gpt-a');
    expect(within(g).getByTestId('countdown').textContent, 'a live reset countdown').toMatch(/^0:4\d$/);
    expect(within(g).getByTestId('quota-age').textContent).toBe('as of 4 min ago');
    expect(g.dataset.low, 'well above the reserve').toBe('false');
  });

  it('shows the share used of subscription windows and warns under the reserve', () => {
    const gauges = cell([
      reading({ name: 'unified_5h', model: null, utilization: 0.42 }),
      reading({ name: 'unified_7d', model: null, utilization: 0.95 }),
      reading({ name: 'tokens', limit: 1000, remaining: 50 }),
    ]);
    expect(gauges.map((g) => within(g).getByTestId('quota-value').textContent)).toEqual(['42% used', '95% used', '50 / 1,000 left']);
    expect(gauges.map((g) => g.dataset.low), `under ${QUOTA_RESERVE * 100}% remaining is a warning`).toEqual(['false', 'true', 'true']);
    expect(gauges[0].textContent).toContain('5-hour window');
  });

  it('says unknown where the provider sent nothing, never a guess', () => {
    const [g] = cell([reading({ remaining: null, limit: 100 })]);
    expect(within(g).getByTestId('quota-value').textContent).toBe('unknown');
    expect(g.querySelector('meter'), 'no bar without both numbers').toBeNull();
    render(QuotaCell, { quota: { id: 'p_2', label: 'b', windows: [] } });
    expect(screen.getByTestId('quota-none').textContent).toContain('unknown');
  });

  it('shows a reading past its reset as stale, without its numbers', () => {
    const gauges = cell([
      reading({ limit: 50, remaining: 3, resets_at: iso(NOW - 5_000), resets_in_secs: -5, stale: true }),
      // Not yet stale when fetched, but its reset has passed since.
      reading({ name: 'tokens', limit: 50, remaining: 3, resets_at: iso(NOW - 1_000), resets_in_secs: 2, stale: false }),
    ]);
    for (const g of gauges) {
      expect(g.dataset.kind).toBe('stale');
      expect(g.textContent).not.toContain('3');
      expect(within(g).queryByTestId('countdown')).toBeNull();
    }
  });
});

describe('quota words', () => {
  it('ages in minutes and hours', () => {
    expect([asOfText(10), asOfText(61), asOfText(3 * 3600)]).toEqual(['as of just now', 'as of 1 min ago', 'as of 3 h ago']);
  });

  it('keeps only the remaining count when the limit is unknown', () => {
    expect(gauge(reading({ remaining: 7 }), NOW)).toEqual({ kind: 'left', remaining: 7, low: false });
    expect(gauge(reading({ limit: 10, remaining: 0, status: 'rejected' }), NOW)).toMatchObject({ kind: 'count', low: true });
  });
});
