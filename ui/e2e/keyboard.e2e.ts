// Keyboard only: open a connection, switch tabs with arrow keys, open and close a dialog,
// and add a profile (past its credential kind) without the mouse.
import { afterAll, describe, expect, it } from 'vitest';
import { close, openApp } from './harness';

afterAll(close);

describe('keyboard', () => {
  it('navigates screens, tabs and dialogs without a mouse', async () => {
    const { page } = await openApp('two-profiles');
    await page.getByTestId('connection').waitFor();
    await page.getByRole('button', { name: 'Open main' }).focus();
    await page.keyboard.press('Enter');
    const profilesTab = page.getByRole('tab', { name: 'Profiles' });
    await profilesTab.focus();
    await page.keyboard.press('ArrowRight');
    expect(await page.getByRole('tab', { name: 'Routing' }).getAttribute('aria-selected')).toBe('true');
    expect(await page.evaluate(() => document.activeElement?.textContent?.trim())).toBe('Routing');
    await page.keyboard.press('End');
    expect(await page.getByRole('tab', { name: 'Activity' }).getAttribute('aria-selected')).toBe('true');
    await page.getByTestId('share-chart').waitFor();
    await page.keyboard.press('Home');

    await page.getByRole('button', { name: 'Add profile' }).focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Add profile to main' });
    await dialog.waitFor();
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name')), 'focus starts in the first field').toBe('label');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Add profile' }).focus();
    await page.keyboard.press('Enter');
    await page.keyboard.type('kbd');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name')), 'the credential kind, one stop').toBe('kind');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('secret');
    await page.keyboard.type('sk-typed-key');
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'detached' });
    await expect.poll(() => page.locator('[data-label="kbd"]').count()).toBe(1);
  });
});
