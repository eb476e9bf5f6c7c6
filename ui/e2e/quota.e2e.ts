// Flows of the limit gauges on the Profiles screen: readings the relay recorded show per key
// and window, with "unknown" where the provider said nothing and "stale" after a reset; new
// readings appear by themselves (the screen polls `quota`).
import { afterAll, describe, expect, it } from 'vitest';
import { close, openApp } from './harness';

afterAll(close);

describe('quota gauges', () => {
  it('render per key and window, warn under the reserve, and update by themselves', async () => {
    const { page, fake, errors } = await openApp('two-profiles');
    await fake((f) => {
      const now = Date.now();
      f.quota.set('main', 'primary', [
        { name: 'requests', model: 'gpt-a', limit: 50, remaining: 37, seenAt: now - 120_000, resetsAt: now + 600_000 },
        { name: 'tokens', model: 'gpt-a', limit: 10_000, remaining: 400, seenAt: now - 120_000, resetsAt: now + 600_000 },
        { name: 'input_tokens', model: 'gpt-a', seenAt: now - 120_000 },
      ]);
      f.quota.set('main', 'backup', [{ name: 'requests', model: 'gpt-a', limit: 50, remaining: 1, seenAt: now - 600_000, resetsAt: now - 1_000 }]);
    });
    await page.getByRole('button', { name: 'Open main' }).click();
    const primary = page.locator('[data-testid="profile"][data-label="primary"] [data-testid="quota-gauge"]');
    await expect.poll(() => primary.count()).toBe(3);
    expect(await primary.nth(0).getByTestId('quota-value').textContent()).toBe('37 / 50 left');
    expect(await primary.nth(0).getByTestId('quota-age').textContent()).toBe('as of 2 min ago');
    expect(await primary.nth(0).getByTestId('countdown').count(), 'a reset countdown').toBe(1);
    expect(await primary.nth(1).getAttribute('data-low'), '4% left is under the reserve').toBe('true');
    expect(await primary.nth(2).getByTestId('quota-value').textContent()).toBe('unknown');
    const backup = page.locator('[data-testid="profile"][data-label="backup"] [data-testid="quota-gauge"]');
    expect(await backup.getAttribute('data-kind'), 'a reading past its reset').toBe('stale');
    expect(await backup.textContent()).not.toContain('1 / 50');

    await fake((f) => f.quota.set('main', 'backup', [{ name: 'requests', model: 'gpt-a', limit: 50, remaining: 49, seenAt: Date.now(), resetsAt: Date.now() + 60_000 }]));
    await expect.poll(() => backup.getByTestId('quota-value').textContent()).toBe('49 / 50 left');
    expect(errors).toEqual([]);
  });
});
