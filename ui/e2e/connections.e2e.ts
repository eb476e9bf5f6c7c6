// Flow: first setup from the empty state — add a connection (with a masked secret-looking
// header and the legacy key), see it listed with its badge and readiness, edit it, remove it.
import { afterAll, describe, expect, it } from 'vitest';
import { close, openApp } from './harness';

afterAll(close);

describe('connections', () => {
  it('guides first setup and adds a connection with its legacy key', async () => {
    const { page, errors } = await openApp('empty');
    await page.getByRole('region', { name: 'No connections yet' }).waitFor();
    await page.getByRole('button', { name: 'Add your first connection' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add connection' });
    await dialog.getByLabel('Name (slug)').fill('openai-main');
    await dialog.getByLabel('Base URL').fill('https://api.example.com/v1');
    await dialog.getByLabel(/^Models/).fill('gpt-a, gpt-b');
    await dialog.getByRole('button', { name: 'Add header' }).click();
    await dialog.getByLabel('Header name 1').fill('X-Session-Token');
    await dialog.getByLabel('Header value 1').fill('abc123def456ghi789jkl012');
    expect(await dialog.getByLabel('Header value 1').getAttribute('type'), 'a secret-looking header value is masked').toBe('password');
    await dialog.getByLabel(/^API key/).fill('  sk-legacy-key-0001\n');
    await dialog.getByRole('button', { name: 'Add connection' }).click();

    await page.getByRole('heading', { name: 'openai-main' }).waitFor();
    const row = page.getByTestId('profile');
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.first().getAttribute('data-label')).toBe('primary');
    expect(await page.getByTestId('routing-badge').textContent()).toBe('legacy');
    expect(await page.getByTestId('connection-meta').textContent(), 'the header value is masked on the page').toContain('x-session-token: ••••••••');

    await page.getByRole('button', { name: 'Back to connections' }).click();
    const card = page.getByTestId('connection');
    await card.waitFor();
    expect(await card.textContent()).toContain('openai-main');
    expect(await card.getByTestId('readiness').textContent()).toContain('0 of 1 profile verified');
    expect(errors).toEqual([]);
  });
});

describe('connection edit and removal', () => {
  it('edits the endpoint, which makes verification stale', async () => {
    const { page } = await openApp('balanced');
    await page.getByRole('button', { name: 'Open main' }).click();
    await page.getByRole('button', { name: 'Edit connection' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit main' });
    await dialog.getByLabel('Base URL').fill('https://eu.api.example.com/v1');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await page.getByText('https://eu.api.example.com/v1').count()).toBeGreaterThan(0);
    const evidence = page.getByTestId('evidence').first();
    await expect.poll(() => evidence.textContent()).toContain('endpoint, headers or protocol changed');
    expect(await page.getByTestId('routing-badge').textContent(), 'stale evidence suspends balanced routing').toBe('suspended');
  });

  it('refuses a credential header with the invalid code', async () => {
    const { page } = await openApp('two-profiles');
    await page.getByRole('button', { name: 'Open main' }).click();
    await page.getByRole('button', { name: 'Edit connection' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit main' });
    await dialog.getByRole('button', { name: 'Add header' }).click();
    await dialog.getByLabel('Header name 2').fill('Authorization');
    await dialog.getByLabel('Header value 2').fill('Bearer nope');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    const error = dialog.getByTestId('error');
    await error.waitFor();
    expect(await error.getAttribute('data-code')).toBe('invalid');
    expect(await error.textContent()).toContain('carries a credential');
  });

  it('removes a connection after a confirmation that names what is deleted', async () => {
    const { page, ipc } = await openApp('two-profiles');
    await page.getByRole('button', { name: 'Open main' }).click();
    await page.getByRole('button', { name: 'Remove connection' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove connection main?' });
    const deletes = await dialog.getByTestId('deletes').textContent();
    expect(deletes).toContain('connection "main"');
    expect(deletes).toContain('2 profiles: primary, backup');
    expect(deletes).toContain('2 keys in the OS keychain');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await ipc()).some((r) => r.name === 'connection_remove'), 'cancel removes nothing').toBe(false);
    await page.getByRole('button', { name: 'Remove connection' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove connection' }).click();
    await page.getByRole('region', { name: 'No connections yet' }).waitFor();
  });
});
