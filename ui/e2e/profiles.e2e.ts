// Flows of the Profiles screen: add a profile (key never echoed), reorder, enable toggle,
// make primary, weight, replace credential (evidence stale at once), remove with confirmation.
import { afterAll, describe, expect, it } from 'vitest';
import { close, openApp } from './harness';

afterAll(close);

async function openMain(seed: string) {
  const app = await openApp(seed);
  await app.page.getByRole('button', { name: 'Open main' }).click();
  await app.page.getByTestId('profile').first().waitFor();
  return app;
}

const labels = (page: import('playwright-core').Page) =>
  page.getByTestId('profile').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-label')));

describe('profiles', () => {
  it('adds a profile; the key field is a password field and is never shown again', async () => {
    const { page } = await openMain('two-profiles');
    await page.getByRole('button', { name: 'Add profile' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add profile to main' });
    expect(await dialog.getByLabel('API key').getAttribute('type')).toBe('password');
    await dialog.getByLabel('Label').fill('team-c');
    await dialog.getByLabel('Weight').fill('2');
    await dialog.getByLabel('API key').fill('sk-team-c-0003');
    await dialog.getByRole('button', { name: 'Add profile' }).click();
    await dialog.waitFor({ state: 'detached' });
    await expect.poll(() => labels(page)).toEqual(['primary', 'backup', 'team-c']);
    const row = page.locator('[data-label="team-c"]');
    expect(await row.textContent()).toContain('in keychain');
    expect(await row.getByTestId('evidence').textContent()).toContain('not verified');
    expect(await page.content()).not.toContain('sk-team-c-0003');
  });

  it('keeps the dialog open with the error when the label exists', async () => {
    const { page } = await openMain('two-profiles');
    await page.getByRole('button', { name: 'Add profile' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add profile to main' });
    await dialog.getByLabel('Label').fill('backup');
    await dialog.getByLabel('API key').fill('sk-dup');
    await dialog.getByRole('button', { name: 'Add profile' }).click();
    const error = dialog.getByTestId('error');
    await error.waitFor();
    expect(await error.getAttribute('data-code')).toBe('conflict');
    expect(await dialog.getByLabel('API key').inputValue(), 'the key is cleared even when the add fails').toBe('');
  });

  it('reorders with the arrow buttons and by drag and drop', async () => {
    const { page } = await openMain('two-profiles');
    await page.getByRole('button', { name: 'Move backup up' }).click();
    await expect.poll(() => labels(page)).toEqual(['backup', 'primary']);
    await page.locator('[data-label="primary"] tr').first().dragTo(page.locator('[data-label="backup"] tr').first());
    await expect.poll(() => labels(page)).toEqual(['primary', 'backup']);
  });

  it('toggles enabled, changes weight and makes another profile primary', async () => {
    const { page } = await openMain('two-profiles');
    const primarySwitch = page.getByRole('switch', { name: 'Enabled primary' });
    expect(await primarySwitch.isDisabled(), 'the primary cannot be disabled').toBe(true);
    await page.getByRole('switch', { name: 'Enabled backup' }).uncheck();
    await expect.poll(() => page.getByRole('switch', { name: 'Enabled backup' }).isChecked()).toBe(false);
    await page.getByRole('switch', { name: 'Enabled backup' }).check();
    await page.getByLabel('Weight of backup').fill('7');
    await page.getByLabel('Weight of backup').press('Enter');
    await expect.poll(() => page.locator('[data-label="backup"]').textContent()).toContain('88%');
    await page.getByRole('button', { name: 'Make backup primary' }).click();
    await expect.poll(() => page.locator('[data-label="backup"] .primary').count()).toBe(1);
    expect(await page.getByRole('switch', { name: 'Enabled primary' }).isDisabled()).toBe(false);
  });

  it('replaces a key: the old one is never shown and evidence is stale at once', async () => {
    const { page } = await openMain('balanced');
    await page.getByRole('button', { name: 'Replace key of backup' }).click();
    const dialog = page.getByRole('dialog', { name: 'Replace the key of backup' });
    const field = dialog.getByLabel('New API key');
    expect(await field.inputValue(), 'the old key is not shown').toBe('');
    expect(await field.getAttribute('type')).toBe('password');
    await field.fill('sk-rotated-0009');
    await dialog.getByRole('button', { name: 'Replace key' }).click();
    await dialog.waitFor({ state: 'detached' });
    const evidence = page.locator('[data-label="backup"]').getByTestId('evidence');
    await expect.poll(() => evidence.textContent()).toContain('credential was replaced');
    expect(await page.getByTestId('suspended').textContent()).toContain('balanced routing is suspended');
  });

  it('removes a profile after a confirmation naming the profile and its key', async () => {
    const { page } = await openMain('two-profiles');
    await page.getByRole('button', { name: 'Remove backup' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove profile backup?' });
    const deletes = await dialog.getByTestId('deletes').textContent();
    expect(deletes).toContain('profile "backup" of main');
    expect(deletes).toContain('its key in the OS keychain');
    await dialog.getByRole('button', { name: 'Remove profile' }).click();
    await expect.poll(() => labels(page)).toEqual(['primary']);
  });

  it('explains why the primary cannot be removed', async () => {
    const { page } = await openMain('two-profiles');
    await page.getByRole('button', { name: 'Remove primary' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove profile primary?' });
    expect(await dialog.textContent()).toContain('make another profile primary first');
    await dialog.getByRole('button', { name: 'Remove profile' }).click();
    const error = dialog.getByTestId('error');
    await error.waitFor();
    expect(await error.getAttribute('data-code')).toBe('precondition');
  });
});
