import { render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { useFake } from '../test/fake';
import { ActivityStore } from './activity.svelte';
import ActivityPanel from './ActivityPanel.svelte';
import { ConnectionStore } from './connectionDetail.svelte';

afterEach(() => vi.useRealTimers());

async function balanced() {
  const env = await useFake('balanced');
  const store = new ConnectionStore('main');
  await store.refresh();
  const labelOf = (id: string) => store.profiles.find((p) => p.id === id)?.label ?? id;
  return { ...env, store, labelOf };
}

describe('ActivityStore', () => {
  it('marks rows and events that arrive after the first load, and polls only while started', async () => {
    const { fake, log, labelOf } = await balanced();
    fake.relay.traffic('main', 4);
    fake.relay.failover('main', 'backup', 'primary');
    const activity = new ActivityStore('main', labelOf);
    await activity.poll();
    expect(activity.rows).toHaveLength(6);
    expect(activity.fresh.size, 'nothing is fresh on the first load').toBe(0);
    expect(activity.events.map((e) => e.kind)).toEqual(['failover']);
    expect(activity.newEvents.size, 'events already in the ledger are not new').toBe(0);

    fake.relay.traffic('main', 2);
    fake.relay.restore('main', 'backup');
    await activity.poll();
    expect(activity.fresh.size).toBe(3);
    expect(activity.events.map((e) => e.kind)).toEqual(['restore', 'failover']);
    expect([...activity.newEvents]).toEqual([activity.events[0].key]);

    vi.useFakeTimers();
    log.length = 0;
    const stop = activity.start();
    await vi.advanceTimersByTimeAsync(3100);
    stop();
    const polls = log.filter((r) => r.name === 'attempts').length;
    expect(polls, 'one poll a second').toBe(4);
    await vi.advanceTimersByTimeAsync(3000);
    expect(log.filter((r) => r.name === 'attempts').length, 'no polls after stop').toBe(polls);
  });
});

describe('ActivityPanel', () => {
  it('charts the share of the last turns against the weights and lists attempts with labels', async () => {
    const { fake, store, labelOf } = await balanced();
    fake.relay.traffic('main', 8);
    const activity = new ActivityStore('main', labelOf, undefined, 60_000);
    render(ActivityPanel, { store, activity });
    await waitFor(() => expect(screen.getAllByTestId('attempt')).toHaveLength(8));
    const rows = screen.getAllByTestId('share-row');
    expect(rows.map((r) => [r.dataset.label, r.dataset.turns, r.dataset.expected])).toEqual([
      ['primary', '2', '0.250'],
      ['backup', '6', '0.750'],
    ]);
    expect(screen.getAllByTestId('attempt')[0].textContent).toMatch(/gpt-a.*(primary|backup).*balanced.*200/);
    expect(screen.getByTestId('activity-events').textContent).toContain('None yet');
    await waitFor(() => expect(screen.getByTestId('usage-totals').textContent).toContain('8 requests (0 failed)'));
    const today = screen.getAllByTestId('usage-day').at(-1);
    expect(today?.querySelectorAll('[data-testid="usage-segment"]'), 'today: a segment per key that served').toHaveLength(2);
    expect(screen.getByTestId('usage-cost').textContent, 'the fake prices gpt-a').toMatch(/^\$0\.\d{4}$/);
    activity.stop();
  });

  it('shows a failover as it appears', async () => {
    const { fake, store, labelOf } = await balanced();
    const activity = new ActivityStore('main', labelOf, undefined, 60_000);
    render(ActivityPanel, { store, activity });
    await waitFor(() => expect(screen.getByTestId('activity-empty')).toBeTruthy());
    fake.relay.failover('main', 'backup', 'primary');
    await activity.poll();
    const event = await screen.findByTestId('activity-event');
    expect(event.dataset.kind).toBe('failover');
    expect(event.classList.contains('live'), 'a new event is highlighted').toBe(true);
    expect(event.textContent).toContain('Failover to primary after backup: rate limited by the provider');
    expect(screen.getAllByTestId('attempt')[0].classList.contains('failover')).toBe(true);
    activity.stop();
  });
});
