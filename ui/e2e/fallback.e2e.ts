// The Routing tab's fallback chain: pick another connection of the same protocol, save the
// chain (stored inactive), see the engine refuse activation with the hop report.
import { afterAll, describe, expect, it } from 'vitest';
import { close, openApp } from './harness';

afterAll(close);

describe('fallback chain', () => {
  it('saves a chain and shows why activation is refused', async () => {
    const { page, ipc } = await openApp('balanced');
    await page.evaluate(() =>
      window.__fake.handle('connection_add', {
        input: { slug: 'spare', protocol: 'openai', base_url: 'https://spare.example.com/v1', models: ['gpt-a'], mappings: [], headers: [] },
        secret: 'sk-seed-spare-0003',
      }),
    );
    await page.getByRole('button', { name: 'Open main' }).click();
    await page.getByRole('tab', { name: 'Routing' }).click();
    await page.getByTestId('fallback-empty').waitFor();
    await page.getByLabel('Connection to add').selectOption('spare');
    await page.getByRole('button', { name: 'Add' }).click();
    await page.getByLabel('Model for spare').fill('gpt-a');
    await page.getByRole('button', { name: 'Save chain' }).click();
    await expect.poll(() => page.getByTestId('fallback-state').textContent()).toBe('inactive');
    await page.getByRole('button', { name: 'Activate', exact: true }).click();
    const error = page.getByTestId('fallback-error');
    await error.waitFor();
    expect(await error.getAttribute('data-code')).toBe('precondition');
    const sent = (await ipc()).filter((r) => r.name === 'fallback_set').map((r) => r.args);
    expect(sent).toEqual([{ slug: 'main', hops: ['spare=gpt-a'] }]);
  });
});
