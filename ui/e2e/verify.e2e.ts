// Flows of test/discovery: verify all with live progress per profile, results inline with
// the failure kind in plain words, per-profile verify, deep check.
import { afterAll, describe, expect, it } from 'vitest';
import { close, openApp } from './harness';

afterAll(close);

describe('verify', () => {
  it('verifies all with a progress indicator per profile and results inline', async () => {
    const { page, ipc } = await openApp('two-profiles');
    await page.evaluate(() => {
      window.__fake.verifyDelayMs = 400;
      window.__fake.verifyScript.backup = { outcome: 'auth_invalid' };
    });
    await page.getByRole('button', { name: 'Open main' }).click();
    await page.getByRole('button', { name: 'Verify all' }).click();
    const primaryLine = page.locator('[data-label="primary"]').getByTestId('verify-line');
    const backupLine = page.locator('[data-label="backup"]').getByTestId('verify-line');
    await expect.poll(() => primaryLine.textContent()).toContain('verifying…');
    expect(await backupLine.textContent(), 'the second profile waits its turn').toContain('waiting to verify');
    await expect.poll(() => page.getByTestId('verify-progress').textContent()).toContain('1 of 2 checked');
    await expect.poll(() => backupLine.textContent()).toContain('verifying…');
    await expect.poll(() => page.getByTestId('verify-progress').textContent()).toContain('2 of 2 checked');
    expect(await primaryLine.textContent()).toContain('verified — 2 models found: gpt-a, gpt-b');
    const failed = await backupLine.textContent();
    expect(failed).toContain('key refused: the provider refused the key');
    expect(failed).toContain('auth_invalid');
    expect(await page.locator('[data-label="backup"]').getByTestId('evidence').textContent()).toContain('key refused');
    const events = (await ipc()).filter((r) => r.kind === 'event' && r.name === 'verify-progress');
    expect(events.map((e) => (e.response as { progress: { event: string } }).progress.event)).toEqual(['started', 'finished', 'started', 'finished']);
  });

  it('verifies one profile with a deep check and shows which models the key may not use', async () => {
    const { page, ipc } = await openApp('two-profiles');
    await page.evaluate(() => (window.__fake.verifyScript.backup = { outcome: 'verified', supported: ['gpt-a'] }));
    await page.getByRole('button', { name: 'Open main' }).click();
    await page.getByLabel('Deep check').check();
    expect(await page.getByText('sends one tiny request (1 token) per model').count()).toBe(1);
    await page.getByRole('button', { name: 'Verify backup' }).click();
    const line = page.locator('[data-label="backup"]').getByTestId('verify-line');
    await expect.poll(() => line.textContent()).toContain('1 model found: gpt-a');
    const evidence = await page.locator('[data-label="backup"]').getByTestId('evidence').textContent();
    expect(evidence).toContain('gpt-a (probed)');
    expect(evidence).toMatch(/gpt-b \(probed\)\s*— this key may not use the model/);
    expect(await page.locator('[data-label="primary"]').getByTestId('verify-line').count(), 'only the chosen profile ran').toBe(0);
    expect((await ipc()).find((r) => r.name === 'verify')?.args).toEqual({ slug: 'main', profile: (await page.evaluate(() => window.__fake.profiles[1].id)), deep: true });
  });

  it('says in plain words why a profile could not be verified', async () => {
    const { page } = await openApp('two-profiles');
    await page.evaluate(() => (window.__fake.verifyScript.primary = { outcome: 'unverified', kind: 'network' }));
    await page.getByRole('button', { name: 'Open main' }).click();
    await page.getByRole('button', { name: 'Verify primary' }).click();
    const line = page.locator('[data-label="primary"]').getByTestId('verify-line');
    await expect.poll(() => line.textContent()).toContain('not verified: could not reach the provider');
    expect(await line.textContent()).toContain('no evidence recorded');
  });
});
