// Engine errors appear by code: a conflict offers "reload and retry", others explain the code.
import { afterAll, describe, expect, it } from 'vitest';
import { close, openApp } from './harness';

afterAll(close);

describe('errors by code', () => {
  it('a conflict offers reload and retry, which re-applies the change to the fresh row', async () => {
    const { page, ipc } = await openApp('two-profiles');
    await page.getByRole('button', { name: 'Open main' }).click();
    await page.getByTestId('profile').first().waitFor();
    await page.evaluate(() => window.__fake.touch('main', 'backup'));
    await page.getByLabel('Weight of backup').fill('5');
    await page.getByLabel('Weight of backup').press('Enter');
    const error = page.getByTestId('error');
    await error.waitFor();
    expect(await error.getAttribute('data-code')).toBe('conflict');
    expect(await error.textContent()).toContain('The data changed elsewhere');
    await error.getByRole('button', { name: 'Reload and retry' }).click();
    await error.waitFor({ state: 'detached' });
    expect(await page.getByLabel('Weight of backup').inputValue()).toBe('5');
    const edits = (await ipc()).filter((r) => r.name === 'profile_edit');
    expect(edits.map((e) => e.ok)).toEqual([false, true]);
  });

  it('a locked keychain is named as such, and the list can be reloaded', async () => {
    const { page } = await openApp('two-profiles');
    await page.getByTestId('connection').waitFor();
    await page.evaluate(() => {
      window.__fake.failNext.list_connections = { code: 'keychain_unavailable', message: 'the OS keychain is unavailable (no D-Bus session)', gates: null };
    });
    await page.getByRole('button', { name: 'Reload' }).click();
    const error = page.getByTestId('error');
    await error.waitFor();
    expect(await error.getAttribute('data-code')).toBe('keychain_unavailable');
    expect(await error.textContent()).toContain('The OS keychain is locked or unavailable.');
    expect(await page.getByTestId('connection').count(), 'the last list stays visible').toBe(1);
    await page.getByRole('button', { name: 'Reload' }).click();
    await error.waitFor({ state: 'detached' });
  });

  it('a connection removed elsewhere reports not found', async () => {
    const { page } = await openApp('two-profiles');
    await page.getByRole('button', { name: 'Open main' }).click();
    await page.getByTestId('profile').first().waitFor();
    await page.evaluate(() => window.__fake.handle('connection_remove', { slug: 'main' }));
    await page.getByRole('button', { name: 'Verify all' }).click();
    const error = page.getByTestId('error');
    await error.waitFor();
    expect(await error.getAttribute('data-code')).toBe('not_found');
    expect(await error.textContent()).toContain("connection 'main' not found");
  });

  it('a conflicting edit in a dialog is retried from the dialog, which then closes', async () => {
    const { page } = await openApp('two-profiles');
    await page.getByRole('button', { name: 'Open main' }).click();
    await page.getByRole('button', { name: 'Edit connection' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit main' });
    await dialog.getByLabel(/^Models/).fill('gpt-a, gpt-b, gpt-c');
    await page.evaluate(() => (window.__fake.connections[0].revision += 1));
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    const error = dialog.getByTestId('error');
    await error.waitFor();
    expect(await error.getAttribute('data-code')).toBe('conflict');
    await error.getByRole('button', { name: 'Reload and retry' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await page.getByTestId('connection-meta').textContent()).toContain('gpt-a, gpt-b, gpt-c');
  });
});
