import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import LimitsPanel from './LimitsPanel.svelte';
import type { LimitsBackend } from './limits.svelte';
import { capText, usedShare, usedText } from './limits.svelte';

const ok = <T,>(data: T) => Promise.resolve({ status: 'ok' as const, data });

function row(used: number, capacity = 5) {
  return {
    id: 'connection-work-usd-day',
    scope: 'connection:work',
    measure: 'usd',
    period: 'day',
    subject: '',
    capacity,
    used,
    reserved: 0,
    remaining: Math.max(0, capacity - used),
    resets_at: '2099-01-01T00:00:00.000Z',
    refused: 0,
  };
}

/** A backend whose cap is what the last `connectionCapSet` said, used as `spent` says. */
function fake(spent: { usd: number }) {
  const calls: unknown[][] = [];
  let capacity: number | null = null;
  const backend = {
    connectionLimits: (slug: string) => {
      calls.push(['limits', slug]);
      return ok(capacity === null ? [] : [row(spent.usd, capacity)]);
    },
    connectionCapSet: (slug: string, kind: string, amount: number) => {
      calls.push(['set', slug, kind, amount]);
      capacity = amount;
      return ok({ id: 'connection-work-usd-day', scope: `connection:${slug}`, measure: 'usd', capacity: amount, period: 'day', revision: 1 });
    },
    limitRemove: (id: string) => {
      calls.push(['remove', id]);
      capacity = null;
      return ok(null);
    },
  } as unknown as LimitsBackend;
  return { backend, calls };
}

describe('LimitsPanel', () => {
  it('sets a daily USD cap, shows the bar, and marks it refusing once spent', async () => {
    const spent = { usd: 0 };
    const { backend, calls } = fake(spent);
    render(LimitsPanel, { slug: 'work', backend });
    await screen.findByTestId('limits-empty');
    await fireEvent.input(screen.getByRole('textbox', { name: 'Amount' }), { target: { value: '5' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Set cap' }));
    await waitFor(() => expect(screen.getByTestId('limit-bar')).toBeTruthy());
    expect(calls).toContainEqual(['set', 'work', 'usd_day', 5]);
    expect(screen.getByTestId('limit-used').textContent).toContain('$0.00 used');
    expect(screen.queryByTestId('limit-full')).toBeNull();
    spent.usd = 5;
    await fireEvent.click(screen.getByRole('button', { name: 'Set cap' })); // empty amount: refused locally
    expect(calls.filter((c) => c[0] === 'set')).toHaveLength(1);
    await fireEvent.input(screen.getByRole('textbox', { name: 'Amount' }), { target: { value: '5' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Set cap' }));
    await waitFor(() => expect(screen.getByTestId('limit-full')).toBeTruthy());
    expect(screen.getByTestId('limit-bar').getAttribute('data-remaining')).toBe('0');
  });

  it('reads caps in words', () => {
    expect(capText(row(1))).toBe('$5.00 a day');
    expect(usedText(row(4.5))).toBe('$4.50 used, $0.50 left');
    expect(usedShare(row(4))).toBeCloseTo(0.8);
    expect(usedShare({ ...row(0), capacity: 0 })).toBe(1);
    expect(capText({ ...row(0), measure: 'requests', period: 'minute', capacity: 60 })).toBe('60 requests a minute');
  });
});
