// No secret in any IPC payload: a canary key typed into the window may appear only as the
// `secret` argument of the one command that stores it (connection_add, profile_add,
// profile_rotate) — never in another argument, a response, an event, the page or storage.
// The relay token (the relay's own credential) may cross only as the answer of `relay_token`.
import { afterAll, describe, expect, it } from 'vitest';
import { close, openApp } from './harness';

afterAll(close);

const CANARY = 'sk-canary-e2e-7f3a';
const SECRET_COMMANDS = ['connection_add', 'profile_add', 'profile_rotate'];

describe('secrets', () => {
  it('a canary key crosses IPC only once, outgoing, as the secret argument', async () => {
    const { page, ipc, fake } = await openApp('empty');
    await page.getByRole('button', { name: 'Add your first connection' }).click();
    let dialog = page.getByRole('dialog', { name: 'Add connection' });
    await dialog.getByLabel('Name (slug)').fill('main');
    await dialog.getByLabel('Base URL').fill('https://api.example.com/v1');
    await dialog.getByLabel(/^Models/).fill('gpt-a, gpt-b');
    await dialog.getByLabel(/^API key/).fill(`${CANARY}-1`);
    await dialog.getByRole('button', { name: 'Add connection' }).click();

    await page.getByRole('button', { name: 'Add profile' }).click();
    dialog = page.getByRole('dialog', { name: 'Add profile to main' });
    await dialog.getByLabel('Label').fill('backup');
    await dialog.getByLabel('API key').fill(`${CANARY}-2`);
    await dialog.getByRole('button', { name: 'Add profile' }).click();
    await dialog.waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Verify all' }).click();
    await page.getByText('2 of 2 checked').waitFor();
    await page.getByRole('tab', { name: 'Routing' }).click();
    await page.getByRole('button', { name: 'Activate balanced' }).click();
    await expect.poll(() => page.getByTestId('routing-badge').textContent()).toBe('balanced');
    await page.getByRole('tab', { name: 'Profiles' }).click();

    await page.getByRole('button', { name: 'Replace key of backup' }).click();
    dialog = page.getByRole('dialog', { name: 'Replace the key of backup' });
    await dialog.getByLabel('New API key').fill(`${CANARY}-3`);
    await dialog.getByRole('button', { name: 'Replace key' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Verify all now' }).click();
    await expect.poll(() => page.getByTestId('routing-badge').textContent()).toBe('balanced');
    await page.getByRole('button', { name: 'Remove backup' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove profile' }).click();
    await fake((f) => f.relay.traffic('main', 5));
    await page.getByRole('tab', { name: 'Activity' }).click();
    await expect.poll(() => page.getByTestId('attempt').count()).toBe(5);
    await page.getByRole('button', { name: 'Back to connections' }).click();
    await page.getByTestId('connection').waitFor();

    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.getByRole('button', { name: /^Relay/ }).click();
    const tokens = [(await fake((f) => f.relay.token)) as string];
    await page.getByRole('button', { name: 'Copy Codex settings' }).click();
    await page.getByTestId('copied').waitFor();
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByRole('button', { name: 'Rotate…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate token' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    tokens.push((await fake((f) => f.relay.token)) as string);
    await expect.poll(() => page.getByTestId('relay-token').textContent()).toBe(tokens[1]);
    await page.getByRole('button', { name: 'Hide' }).click();

    const log = await ipc();
    const tokenAnswers = log.filter((r) => r.kind === 'invoke' && r.name === 'relay_token');
    expect(tokenAnswers.map((r) => r.response), 'copy, show and rotate each fetched the token once').toEqual([tokens[0], tokens[0], tokens[1]]);
    for (const r of log) {
      const where = `${r.kind} ${r.name}`;
      const text = JSON.stringify(r.args) + (r.kind === 'invoke' && r.name === 'relay_token' ? '' : JSON.stringify(r.response));
      for (const t of tokens) expect(text, `${where} carried the relay token`).not.toContain(t);
    }
    expect(log.some((r) => r.kind === 'event' && r.name === 'relay-status-changed'), 'relay events were checked').toBe(true);

    expect(log.filter((r) => r.kind === 'event').length, 'verification events were recorded').toBeGreaterThan(0);
    const sentAsSecret: string[] = [];
    for (const r of log) {
      const where = `${r.kind} ${r.name}`;
      expect(JSON.stringify(r.response), `${where} answered with a secret`).not.toContain('canary');
      const args = { ...(r.args as Record<string, unknown>) };
      if (r.kind === 'invoke' && SECRET_COMMANDS.includes(r.name) && typeof args.secret === 'string') {
        sentAsSecret.push(args.secret);
        delete args.secret;
      }
      expect(JSON.stringify(args), `${where} carried a secret outside its secret argument`).not.toContain('canary');
    }
    expect(sentAsSecret, 'each key was sent exactly once').toEqual([`${CANARY}-1`, `${CANARY}-2`, `${CANARY}-3`]);

    expect(await page.content(), 'no key in the page').not.toContain('canary');
    const values = await page.evaluate(() => [...document.querySelectorAll('input, textarea')].map((e) => (e as HTMLInputElement).value));
    expect(values.join(' ')).not.toContain('canary');
    const storage = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }));
    expect(storage).not.toContain('canary');
  });
});
