// Flows of subscription accounts on the Profiles screen (issue 28): add a token profile and see
// its kind and health (the token never reaches the page), sign an external profile in again
// (the terminal command, Copy, Check again), paste a new token for an expired one, and see a
// rejected subscription window as a red gauge with its reset countdown, the binding window and
// the forecast.
import { afterAll, describe, expect, it } from 'vitest';
import { close, openApp } from './harness';

afterAll(close);

async function openSubs() {
  const app = await openApp('subscriptions');
  await app.page.getByRole('button', { name: 'Open subs' }).click();
  await app.page.getByTestId('profile').first().waitFor();
  return app;
}

const row = (page: import('playwright-core').Page, label: string) => page.locator(`[data-testid="profile"][data-label="${label}"]`);

describe('subscription accounts', () => {
  it('adds a token profile: kind badge, health with its day, the token never shown', async () => {
    const { page, ipc, errors } = await openSubs();
    await page.getByRole('button', { name: 'Add profile' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add profile to subs' });
    await dialog.getByLabel('Label').fill('max-3');
    await dialog.getByLabel('Subscription token (Claude Code)').check();
    const token = dialog.getByLabel(/^Token/);
    expect(await token.getAttribute('type')).toBe('password');
    await token.fill('sk-ant-oat01-e2e-max-3-secret');
    await dialog.getByLabel(/^Expires on/).fill('2031-06-30');
    await dialog.getByRole('button', { name: 'Add profile' }).click();
    await dialog.waitFor({ state: 'detached' });
    const added = row(page, 'max-3');
    await added.waitFor();
    expect(await added.getByTestId('kind').textContent()).toBe('token · Claude Code');
    expect(await added.getByTestId('credential-health').getAttribute('data-state')).toBe('ok');
    expect(await added.getByTestId('credential-health').textContent()).toContain('ok until 2031-06-30');
    expect(await added.getByRole('button', { name: 'Replace key of max-3' }).count(), 'a token is renewed by signing in again').toBe(0);
    expect(await row(page, 'primary').getByTestId('kind').textContent()).toBe('API key');
    expect(await page.content()).not.toContain('sk-ant-oat01-e2e-max-3-secret');
    const sent = (await ipc()).find((r) => r.name === 'profile_add');
    expect(sent?.args, 'the kind and expiry go to the engine').toMatchObject({ credential: { kind: 'token', client: 'claude-code' } });
    expect(JSON.stringify((await ipc()).map((r) => r.response))).not.toContain('sk-ant-oat01-e2e');
    expect(errors).toEqual([]);
  });

  it('signs an external profile in again: the terminal command, Copy, then Check again', async () => {
    const { page, fake, errors } = await openSubs();
    const max2 = row(page, 'max-2');
    expect(await max2.getByTestId('kind').textContent()).toBe('sign-in · Claude Code');
    expect(await max2.getByTestId('credential-health').textContent()).toContain('not signed in');
    await max2.getByRole('button', { name: 'Sign in again max-2' }).click();
    const dialog = page.getByRole('dialog', { name: 'Sign in max-2 again' });
    await expect.poll(() => dialog.getByTestId('login-command').textContent()).toBe('switchyard profile login subs max-2');
    await dialog.getByRole('button', { name: 'Check again' }).click();
    await dialog.getByTestId('error').waitFor();
    expect(await dialog.getByTestId('error').getAttribute('data-code'), 'still not signed in').toBe('precondition');
    await fake((f) => f.signIn('subs', 'max-2'));
    await dialog.getByRole('button', { name: 'Check again' }).click();
    await dialog.getByTestId('signed-in').waitFor();
    await dialog.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => max2.getByTestId('credential-health').getAttribute('data-state')).toBe('ok');
    expect(await max2.getByTestId('credential-health').textContent()).toContain('signed in');
    expect(errors).toEqual([]);
  });

  it('adding a sign-in profile shows its sign-in command at once', async () => {
    const { page } = await openSubs();
    await page.getByRole('button', { name: 'Add profile' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add profile to subs' });
    await dialog.getByLabel('Label').fill('max-4');
    await dialog.getByLabel('Claude Code sign-in').check();
    expect(await dialog.locator('input[type=password]').count(), 'no secret for a sign-in').toBe(0);
    await dialog.getByRole('button', { name: 'Add profile' }).click();
    const signIn = page.getByRole('dialog', { name: 'Sign in max-4 again' });
    await expect.poll(() => signIn.getByTestId('login-command').textContent()).toBe('switchyard profile login subs max-4');
  });

  it('renews an expired token with a new one and its expiry', async () => {
    const { page, fake } = await openSubs();
    await fake((f) => f.expireIn('subs', 'max-1', -60_000));
    await page.getByRole('button', { name: 'Reload' }).click();
    const max1 = row(page, 'max-1');
    await expect.poll(() => max1.getByTestId('credential-health').getAttribute('data-state')).toBe('expired');
    expect(await max1.getByTestId('credential-reason').textContent()).toContain('the token has expired');
    await max1.getByRole('button', { name: 'Sign in again max-1' }).click();
    const dialog = page.getByRole('dialog', { name: 'New token for max-1' });
    await dialog.getByLabel(/^New token/).fill('sk-ant-oat01-e2e-renewed');
    await dialog.getByLabel(/^Expires on/).fill('2032-01-31');
    await dialog.getByRole('button', { name: 'Save token' }).click();
    await dialog.waitFor({ state: 'detached' });
    await expect.poll(() => max1.getByTestId('credential-health').textContent()).toContain('ok until 2032-01-31');
    expect(await page.content()).not.toContain('sk-ant-oat01-e2e-renewed');
  });

  it('shows a rejected window as a red gauge with its reset countdown, the binding window and the forecast', async () => {
    const { page, fake, errors } = await openSubs();
    await fake((f) => {
      const now = Date.now();
      f.quota.set('subs', 'max-1', [
        { name: 'unified_5h', utilization: 1, status: 'rejected', seenAt: now - 30_000, resetsAt: now + 2 * 3_600_000 + 600_000, binding: true },
        { name: 'unified_7d', utilization: 0.62, status: 'allowed', seenAt: now - 30_000, resetsAt: now + 3 * 86_400_000, exhaustsAt: now + 2 * 86_400_000 },
      ]);
    });
    const gauges = row(page, 'max-1').getByTestId('quota-gauge');
    await expect.poll(() => gauges.count()).toBe(2);
    const five = gauges.nth(0);
    expect(await five.getAttribute('data-status')).toBe('rejected');
    expect(await five.getAttribute('data-binding'), 'the claim names the 5-hour window').toBe('true');
    expect(await five.textContent()).toContain('5-hour window');
    expect(await five.getByTestId('quota-status').textContent()).toBe('limit reached');
    expect(await five.getByTestId('quota-value').textContent()).toBe('100% used');
    expect(await five.getByTestId('countdown').textContent(), 'resets in about 2 h 10 min').toMatch(/^2:(09|10):\d\d$/);
    const colour = await five.getByTestId('quota-value').evaluate((e) => getComputedStyle(e).color);
    const bad = await page.evaluate(() => {
      const probe = document.createElement('span');
      probe.style.color = 'var(--bad)';
      document.body.append(probe);
      const c = getComputedStyle(probe).color;
      probe.remove();
      return c;
    });
    expect(colour, 'a used-up window is in the error colour').toBe(bad);
    const week = gauges.nth(1);
    expect(await week.textContent()).toContain('weekly window');
    expect(await week.getByTestId('quota-forecast').textContent()).toMatch(/^runs out \w{3} \d\d:\d\d at this rate$/);
    expect(await week.getByTestId('countdown').textContent()).toMatch(/^[23] d /);
    expect(errors).toEqual([]);
  });
});
