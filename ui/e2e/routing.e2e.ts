// Flows of the Routing screen: gates failing then passing, activation, the suspended state
// explained with its fix, deactivation, and a live cooldown countdown.
import { afterAll, describe, expect, it } from 'vitest';
import { close, openApp } from './harness';

afterAll(close);

describe('routing', () => {
  it('shows gates failing, then passing after verification, and activates balanced', async () => {
    const { page, ipc } = await openApp('two-profiles');
    await page.evaluate(() => (window.__fake.verifyScript.backup = { outcome: 'verified', supported: ['gpt-a'] }));
    await page.getByRole('button', { name: 'Open main' }).click();
    await page.getByRole('tab', { name: 'Routing' }).click();
    const activate = page.getByRole('button', { name: 'Activate balanced' });
    expect(await activate.isDisabled()).toBe(true);
    expect(await page.getByTestId('activate-why').textContent()).toContain('model gpt-a has no eligible profile');
    const gptA = page.locator('[data-testid="gate-model"][data-model="gpt-a"]');
    expect(await gptA.textContent()).toContain('backup: not verified yet');

    await page.getByRole('tab', { name: 'Profiles' }).click();
    await page.getByRole('button', { name: 'Verify all' }).click();
    await page.getByText('2 of 2 checked').waitFor();
    await page.getByRole('tab', { name: 'Routing' }).click();
    expect(await gptA.textContent()).toContain('can be served by primary, backup');
    const gptB = page.locator('[data-testid="gate-model"][data-model="gpt-b"]');
    expect(await gptB.textContent(), 'why the other profile cannot serve gpt-b').toContain('backup: the key cannot use this model');
    expect(await activate.isDisabled()).toBe(false);
    expect(await page.getByTestId('activate-why').textContent()).toContain('The gates pass');
    await activate.click();
    await expect.poll(() => page.getByTestId('routing-current').textContent()).toContain('balanced (active)');
    expect(await page.getByTestId('routing-badge').textContent()).toBe('balanced');
    expect((await ipc()).find((r) => r.name === 'routing_activate')?.args).toEqual({ slug: 'main', mode: 'balanced' });

    await page.getByRole('button', { name: 'Deactivate (back to legacy)' }).click();
    await expect.poll(() => page.getByTestId('routing-badge').textContent()).toBe('legacy');
  });

  it('shows the gate report when the engine refuses an activation', async () => {
    const { page } = await openApp('two-profiles');
    await page.getByRole('button', { name: 'Open main' }).click();
    await page.getByRole('button', { name: 'Verify all' }).click();
    await page.getByText('2 of 2 checked').waitFor();
    await page.getByRole('tab', { name: 'Routing' }).click();
    // Between the check and the click, another window disabled the backup profile.
    await page.evaluate(() => {
      const p = window.__fake.profiles.find((x) => x.label === 'backup');
      if (p) p.enabled = false;
    });
    await page.getByRole('button', { name: 'Activate balanced' }).click();
    const error = page.getByTestId('error');
    await error.waitFor();
    expect(await error.getAttribute('data-code')).toBe('precondition');
    expect(await page.getByText('(refused activation)').count()).toBe(1);
    expect(await page.locator('[data-model="gpt-a"]').textContent()).toContain('backup: disabled');
  });

  it('explains a suspension and fixes it with the one action it offers', async () => {
    const { page } = await openApp('balanced');
    await page.getByRole('button', { name: 'Open main' }).click();
    await page.getByRole('button', { name: 'Replace key of backup' }).click();
    const dialog = page.getByRole('dialog', { name: 'Replace the key of backup' });
    await dialog.getByLabel('New API key').fill('sk-rotated-0010');
    await dialog.getByRole('button', { name: 'Replace key' }).click();
    const notice = page.getByTestId('suspended');
    await notice.waitFor();
    const text = await notice.textContent();
    expect(text).toContain('balanced routing is suspended');
    expect(text).toContain('use only the primary key (legacy)');
    expect(text).toContain('no model has two eligible profiles');
    expect(await page.getByTestId('routing-badge').textContent()).toBe('suspended');
    await notice.getByRole('button', { name: 'Verify all now' }).click();
    await notice.waitFor({ state: 'detached' });
    expect(await page.getByTestId('routing-badge').textContent(), 'verification restored routing').toBe('balanced');
  });

  it('shows a cooldown with a live countdown and resets it', async () => {
    const { page } = await openApp('balanced');
    await page.evaluate(() => window.__fake.coolDown('main', 'backup', 125));
    await page.getByRole('button', { name: 'Open main' }).click();
    const countdown = page.locator('[data-label="backup"]').getByTestId('countdown');
    await countdown.waitFor();
    const first = await countdown.textContent();
    expect(first).toMatch(/^2:0[0-5]$/);
    await expect.poll(() => countdown.textContent(), { timeout: 3000 }).not.toBe(first);
    expect(await page.locator('[data-label="backup"]').getByTestId('health').textContent()).toContain('all models: cooling down');
    await page.getByRole('button', { name: 'Reset all models circuit of backup' }).click();
    await expect.poll(() => page.locator('[data-label="backup"]').getByTestId('health').textContent()).toContain('healthy');
  });

  it('drops an ended cooldown without a manual reload', async () => {
    const { page } = await openApp('balanced');
    await page.evaluate(() => window.__fake.coolDown('main', 'primary', 2, 'gpt-a'));
    await page.getByRole('button', { name: 'Open main' }).click();
    const health = page.locator('[data-label="primary"]').getByTestId('health');
    await expect.poll(() => health.textContent()).toContain('gpt-a: cooling down');
    await expect.poll(() => health.textContent(), { timeout: 6000 }).toContain('healthy');
  });

  it("sets the affinity and shows the engine's error for a bad window", async () => {
    const { page, ipc } = await openApp('balanced');
    await page.getByRole('button', { name: 'Open main' }).click();
    await page.getByRole('tab', { name: 'Routing' }).click();
    expect(await page.getByTestId('affinity').textContent()).toContain('keeps a conversation on one key while its prompt cache is warm');
    const minutes = page.getByLabel('Affinity window in minutes');
    expect(await minutes.inputValue()).toBe('10');
    await minutes.fill('0');
    await page.getByRole('button', { name: 'Save affinity' }).click();
    expect(await page.getByTestId('affinity-error').textContent()).toBe('window_min: must be between 1 and 1440 minutes (got 0)');
    await minutes.fill('45');
    await page.getByRole('button', { name: 'Save affinity' }).click();
    await page.getByTestId('affinity-saved').waitFor();
    await page.getByLabel(/Per turn/).check();
    await page.getByRole('button', { name: 'Save affinity' }).click();
    await page.getByTestId('affinity-saved').waitFor();
    const sent = (await ipc()).filter((r) => r.name === 'routing_affinity').map((r) => r.args);
    expect(sent).toEqual([
      { slug: 'main', mode: 'conversation', windowMin: 0 },
      { slug: 'main', mode: 'conversation', windowMin: 45 },
      { slug: 'main', mode: 'turn', windowMin: null },
    ]);
    const status = await page.evaluate(() => window.__fake.handle('routing_status', { slug: 'main' }));
    expect((status as { affinity: unknown }).affinity, 'per turn keeps the window').toEqual({ mode: 'turn', window_min: 45 });
  });
});
