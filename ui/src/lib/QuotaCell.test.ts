import { render, screen, within } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import { asOfText, forecastText, gauge, QUOTA_RESERVE, windowLabel } from './quota';
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

describe('subscription windows as gauges', () => {
  const sub = (over: Partial<QuotaWindowView>) =>
    reading({ model: null, kind: 'five_hour', name: 'unified_5h', utilization: 0.4, status: 'allowed', ...over });

  it('colours the status, marks the binding window and says when it runs out', () => {
    const [five, week, opus] = cell([
      sub({ binding: true, exhausts_at: iso(NOW + 7_200_000), exhausts_local: 'Tue 14:05', resets_at: iso(NOW + 3 * 3_600_000) }),
      sub({ name: 'unified_7d', kind: 'seven_day', status: 'allowed_warning', utilization: 0.8, resets_at: iso(NOW + 3 * 86_400_000) }),
      sub({ name: 'unified_7d_opus', kind: 'seven_day_model', family: 'opus', status: 'rejected', utilization: 1 }),
    ]);
    expect(five.textContent).toContain('5-hour window');
    expect(five.dataset.binding, 'the window the provider names as binding').toBe('true');
    expect(within(five).getByTestId('quota-binding').textContent).toBe('binding');
    expect(within(five).getByTestId('quota-forecast').textContent).toBe('runs out Tue 14:05 at this rate');
    expect(five.classList.contains('tone-ok')).toBe(true);
    expect(week.classList.contains('tone-warn'), 'close to the limit').toBe(true);
    expect(within(week).getByTestId('quota-status').textContent).toBe('close to the limit');
    expect(within(week).getByTestId('countdown').textContent, 'a weekly reset counts days').toMatch(/^[23] d \d+:\d\d:\d\d$/);
    expect(within(week).queryByTestId('quota-binding')).toBeNull();
    expect(opus.textContent).toContain('weekly opus window');
    expect(opus.dataset.status).toBe('rejected');
    expect(opus.classList.contains('tone-bad'), 'a used-up window is red').toBe(true);
    expect(within(opus).getByTestId('quota-status').textContent).toBe('limit reached');
    expect(within(opus).getByTestId('quota-value').textContent).toBe('100% used');
  });

  it('names Codex windows by their kind and length, and forecasts nothing for a spent or stale one', () => {
    expect(windowLabel(sub({ name: 'codex_5h', kind: 'five_hour' }))).toBe('5-hour window');
    expect(windowLabel(sub({ name: 'codex_primary', kind: 'codex_primary', window_minutes: 4320 }))).toBe('Codex primary window (3 d)');
    expect(windowLabel(reading({ name: 'requests', kind: 'requests' }))).toBe('requests · gpt-a');
    const at = { exhausts_at: iso(NOW + 60_000), exhausts_local: 'Wed 09:00' };
    expect(forecastText(sub({ ...at }))).toBe('runs out Wed 09:00 at this rate');
    expect(forecastText(sub({ ...at, status: 'rejected' })), 'already out').toBeNull();
    expect(forecastText(sub({ ...at, stale: true })), 'reset since').toBeNull();
  });
});

