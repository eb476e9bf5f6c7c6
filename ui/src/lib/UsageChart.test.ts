import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import { dayBars, usdText } from './usage';
import UsageChart from './UsageChart.svelte';
import type { UsageChart as Chart, UsageRow } from './types';

function cell(key: string, over: Partial<UsageRow> = {}): UsageRow {
  return {
    key, requests: 0, errors: 0, input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, ...over,
  };
}

const DAYS = ['2026-11-13', '2026-11-14', '2026-11-15'];

/** Two keys over three days; `b` used a model without a price on the 15th. */
function fixture(): Chart {
  return {
    slug: 'main',
    time_zone: 'Europe/Berlin',
    days: DAYS,
    series: [
      {
        profile: 'p_a', label: 'primary',
        days: [cell(DAYS[0], { requests: 2, input_tokens: 1000, output_tokens: 500, cost_usd: 0.0105 }), cell(DAYS[1]), cell(DAYS[2], { requests: 1, input_tokens: 100, output_tokens: 100, cost_usd: 0.0018 })],
      },
      {
        profile: 'p_b', label: 'backup',
        days: [cell(DAYS[0], { requests: 1, input_tokens: 300, output_tokens: 200, cache_read_tokens: 1000, cost_usd: 0.004 }), cell(DAYS[1]), cell(DAYS[2], { requests: 3, errors: 1, input_tokens: 50, output_tokens: 50, cost_usd: null })],
      },
    ],
    total: cell('total', { requests: 7, errors: 1, input_tokens: 1450, output_tokens: 850, cache_read_tokens: 1000, cost_usd: null }),
    complete: false,
  };
}

describe('usage chart', () => {
  it('stacks a segment per key and day, sized by tokens', () => {
    render(UsageChart, { chart: fixture(), days: 14 });
    const days = screen.getAllByTestId('usage-day');
    expect(days.map((d) => d.dataset.day)).toEqual(DAYS);
    expect(days.map((d) => d.dataset.total), 'tokens per day: all four counts summed').toEqual(['3000', '0', '300']);
    const first = days[0].querySelectorAll<SVGRectElement>('[data-testid="usage-segment"]');
    expect([...first].map((s) => [s.dataset.label, s.dataset.value])).toEqual([['primary', '1500'], ['backup', '1500']]);
    expect(Number(first[0].getAttribute('height')), 'equal tokens, equal heights').toBeCloseTo(Number(first[1].getAttribute('height')));
    expect(days[1].querySelectorAll('[data-testid="usage-segment"]'), 'a day without usage has no segment').toHaveLength(0);
    expect(screen.getByTestId('usage-totals').textContent).toContain('7 requests (1 failed)');
  });

  it('shows an unknown cost as unknown and the total as incomplete, never a guess', async () => {
    render(UsageChart, { chart: fixture(), days: 14 });
    await fireEvent.change(screen.getByLabelText('Usage metric'), { target: { value: 'cost' } });
    expect(screen.getByTestId('usage-chart').dataset.metric).toBe('cost');
    const days = screen.getAllByTestId('usage-day');
    expect(days[0].dataset.total, 'a fully priced day has a cost').toBe(String(0.0105 + 0.004));
    expect(days[2].dataset.total, 'a day with an unpriced model is unknown').toBe('unknown');
    expect(days[2].textContent).toContain('?');
    const segs = [...days[2].querySelectorAll<SVGRectElement>('[data-testid="usage-segment"]')];
    expect(segs.map((s) => s.dataset.value)).toEqual(['0.0018', 'unknown']);
    expect(screen.getByTestId('usage-cost').textContent).toBe('unknown');
    expect(screen.getByTestId('usage-incomplete').textContent).toContain('switchyard prices set');
  });

  it('shows a complete total in dollars and asks for another range', async () => {
    const chart = fixture();
    chart.series[1].days[2].cost_usd = 0.5;
    chart.total.cost_usd = 0.5163;
    chart.complete = true;
    const onDays = vi.fn();
    render(UsageChart, { chart, days: 14, onDays });
    expect(screen.getByTestId('usage-cost').textContent).toBe('$0.5163');
    expect(screen.queryByTestId('usage-incomplete')).toBeNull();
    await fireEvent.change(screen.getByLabelText('Days in the usage chart'), { target: { value: '30' } });
    expect(onDays).toHaveBeenCalledWith(30);
  });

  it('keeps the arithmetic honest', () => {
    expect(usdText(null)).toBe('unknown');
    expect(usdText(0)).toBe('$0.00');
    expect(usdText(12.345)).toBe('$12.35');
    const bars = dayBars(fixture(), 'cost');
    expect(bars.map((b) => b.total)).toEqual([0.0105 + 0.004, 0, null]);
  });
});
