// Flows of the Relay screen: status and URL, the token hidden until shown, copy, rotation
// behind a confirmation, a taken port explained and retried, a port change, and client
// settings per protocol for the selected connection.
import { afterAll, describe, expect, it } from 'vitest';
import { close, openApp } from './harness';

afterAll(close);

describe('relay', () => {
  it('shows the URL, keeps the token hidden until asked, copies and rotates it', async () => {
    const { page, fake } = await openApp('two-profiles');
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.getByTestId('connection').waitFor();
    expect(await page.getByTestId('relay-dot').getAttribute('class')).toContain('state-listening');
    await page.getByRole('button', { name: /^Relay/ }).click();
    expect(await page.getByTestId('relay-url').textContent()).toBe('http://127.0.0.1:4141');
    expect(await page.getByTestId('client-base-url').textContent()).toBe('http://127.0.0.1:4141/c/main/v1');
    const token = (await fake((f) => f.relay.token)) as string;
    expect(await page.content(), 'the token is hidden by default').not.toContain(token);

    await page.getByRole('button', { name: 'Copy OpenAI SDK settings' }).click();
    await page.getByTestId('copied').waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toContain(`export OPENAI_BASE_URL=http://127.0.0.1:4141/c/main/v1\nexport OPENAI_API_KEY=${token}`);
    expect(await page.content(), 'copying does not reveal it').not.toContain(token);

    await page.getByRole('button', { name: 'Show' }).click();
    await expect.poll(() => page.getByTestId('relay-token').textContent()).toBe(token);
    expect(await page.locator('[data-id="codex"]').textContent()).toContain(`SWITCHYARD_RELAY_TOKEN=${token}`);

    await page.getByRole('button', { name: 'Rotate…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate the relay token?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await fake((f) => f.relay.token), 'cancel keeps the token').toBe(token);
    await page.getByRole('button', { name: 'Rotate…' }).click();
    await dialog.getByRole('button', { name: 'Rotate token' }).click();
    await dialog.waitFor({ state: 'detached' });
    const rotated = (await fake((f) => f.relay.token)) as string;
    expect(rotated).not.toBe(token);
    await expect.poll(() => page.getByTestId('relay-token').textContent(), { message: 'the revealed token follows the rotation' }).toBe(rotated);

    await page.getByRole('button', { name: 'Connections' }).click();
    await page.getByRole('button', { name: /^Relay/ }).click();
    expect(await page.getByTestId('relay-token').textContent(), 'leaving the screen hides the token again').not.toContain(rotated);
  });

  it('explains a taken port, retries, and moves to another port', async () => {
    const { page, fake } = await openApp('two-profiles');
    await fake((f) => (f.relay.portTaken = true));
    await page.getByRole('button', { name: /^Relay/ }).click();
    await expect.poll(() => page.getByTestId('relay-status').getAttribute('data-state')).toBe('error');
    expect(await page.getByTestId('relay-error').textContent()).toContain('port 4141 is already in use by another program');
    expect(await page.getByTestId('relay-dot').getAttribute('class')).toContain('state-error');
    await page.getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => page.getByTestId('relay-status').getAttribute('data-state'), { message: 'still taken' }).toBe('error');

    await page.getByLabel('Port').fill('80');
    await page.getByRole('button', { name: 'Save and restart' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('between 1024 and 65535');
    await page.getByLabel('Port').fill('5151');
    await page.getByRole('button', { name: 'Save and restart' }).click();
    await expect.poll(() => page.getByTestId('relay-url').textContent()).toBe('http://127.0.0.1:5151');
    expect(await page.getByTestId('relay-dot').getAttribute('class')).toContain('state-listening');
    expect(await page.getByTestId('client-base-url').textContent()).toBe('http://127.0.0.1:5151/c/main/v1');
  });

  it('gives the settings of the connection opened last, per protocol', async () => {
    const { page, fake } = await openApp('two-profiles');
    await fake(async (f) => {
      await f.handle('connection_add', {
        input: { slug: 'claude', protocol: 'anthropic', base_url: 'https://api.anthropic.com', models: ['claude-x'], mappings: [], headers: [] },
        secret: 'sk-ant-e2e-seed',
      });
    });
    await page.getByRole('button', { name: 'Reload' }).click();
    await page.getByRole('button', { name: 'Open claude' }).click();
    await page.getByRole('button', { name: /^Relay/ }).click();
    expect(await page.getByTestId('relay-connection').inputValue()).toBe('claude');
    const snippets = page.getByTestId('snippet');
    await expect.poll(() => snippets.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.id))).toEqual(['claude-code', 'anthropic-sdk']);
    expect(await snippets.first().textContent()).toContain('ANTHROPIC_BASE_URL=http://127.0.0.1:4141/c/claude');
    expect(await snippets.first().textContent()).toContain('ANTHROPIC_AUTH_TOKEN=');
    await page.getByTestId('relay-connection').selectOption('main');
    await expect.poll(() => snippets.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.id))).toEqual(['codex', 'opencode', 'openai-sdk']);
  });
});
