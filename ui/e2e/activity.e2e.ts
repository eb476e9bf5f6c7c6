// Flows of the Activity screen: attempts appear live (polled once a second while shown), the
// traffic share per profile against its weight, a failover and a restore highlighted as they
// happen (with the cooldown on the Profiles screen), and no polling once the screen is left.
import { afterAll, describe, expect, it } from 'vitest';
import { close, openApp } from './harness';

afterAll(close);

describe('activity', () => {
  it('shows live attempts, the share against the weights, failover and restore', async () => {
    const { page, fake, ipc } = await openApp('balanced');
    await page.getByRole('button', { name: 'Open main' }).click();
    await page.getByRole('tab', { name: 'Activity' }).click();
    await page.getByTestId('activity-empty').waitFor();

    await fake((f) => f.relay.traffic('main', 40));
    await expect.poll(() => page.getByTestId('attempt').count(), { timeout: 3000 }).toBe(40);
    const share = (label: string) => page.locator(`[data-testid="share-row"][data-label="${label}"]`);
    expect(await share('backup').getAttribute('data-turns'), 'weight 3 of 4 over 40 turns').toBe('30');
    expect(await share('primary').getAttribute('data-turns')).toBe('10');
    expect(await share('backup').getAttribute('data-expected')).toBe('0.750');
    expect(await page.getByTestId('share-chart').textContent()).toContain('75% (30 turns) · weight 3 → 75%');
    expect(await page.getByTestId('attempt').first().textContent()).toMatch(/gpt-a(primary|backup)balanced200/);
    await expect.poll(() => page.getByTestId('usage-totals').textContent(), { timeout: 7000 }).toContain('40 requests (0 failed)');
    expect(await page.getByTestId('usage-day').last().locator('[data-testid="usage-segment"]').count(), 'today: a segment per key').toBe(2);
    await page.getByLabel('Usage metric').selectOption('cost');
    expect(await page.getByTestId('usage-chart').getAttribute('data-metric')).toBe('cost');
    expect(await page.getByTestId('usage-cost').textContent(), 'the fake prices gpt-a').toMatch(/^\$0\.\d{4}$/);

    await fake((f) => f.relay.failover('main', 'backup', 'primary'));
    const event = page.getByTestId('activity-event').first();
    await expect.poll(() => event.getAttribute('data-kind'), { timeout: 3000 }).toBe('failover');
    expect(await event.textContent()).toContain('Failover to primary after backup: rate limited by the provider');
    expect(await event.getAttribute('class'), 'a new event is highlighted').toContain('live');
    expect(await page.getByTestId('attempt').first().getAttribute('class')).toContain('failover');
    expect(await page.getByTestId('attempt').first().getAttribute('data-reason')).toBe('failover:rate_limited');

    await page.getByRole('tab', { name: 'Profiles' }).click();
    await page.getByRole('button', { name: 'Reload' }).click();
    const countdown = page.locator('[data-label="backup"]').getByTestId('countdown');
    await expect.poll(() => countdown.textContent()).toMatch(/^0:(2\d|30)$/);
    const calls = (await ipc()).filter((r) => r.name === 'attempts').length;
    await page.waitForTimeout(1500);
    expect((await ipc()).filter((r) => r.name === 'attempts').length, 'no polling off the Activity screen').toBe(calls);

    await page.getByRole('tab', { name: 'Activity' }).click();
    await fake((f) => f.relay.restore('main', 'backup'));
    await expect.poll(() => page.getByTestId('activity-event').first().getAttribute('data-kind'), { timeout: 3000 }).toBe('restore');
    expect(await page.getByTestId('activity-event').first().textContent()).toContain('backup restored: the recovery probe succeeded');
    expect(await page.getByTestId('attempt').first().getAttribute('class')).toContain('restore');

    await page.getByLabel('Turns in the chart').selectOption('20');
    await expect.poll(() => page.getByTestId('share-chart').getAttribute('data-turns')).toBe('20');
  });
});
