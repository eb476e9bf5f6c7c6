// Flow: export and import of shared configurations (issue 7) with the dialog plugin mocked
// (`plugin:dialog|save` / `plugin:dialog|open` answered by the fake): export writes a file
// without keys; import previews (rename/skip), applies, and says what arrives disabled and
// pending; a bad file shows the engine's path-named error and writes nothing.
import { afterAll, describe, expect, it } from 'vitest';
import { close, openApp } from './harness';

afterAll(close);

const SHARED = '/home/user/shared.json';

describe('export', () => {
  it('writes every connection, or the open one, to the file chosen in the save dialog', async () => {
    const { page, ipc, fake, errors } = await openApp('balanced');
    await page.getByRole('button', { name: 'Export all connections to a file' }).click();
    const message = page.getByTestId('export-message');
    await message.waitFor();
    expect(await message.textContent()).toContain('Exported 1 connection to /home/user/switchyard-config.json');
    const log = await ipc();
    const save = log.find((r) => r.name === 'plugin:dialog|save');
    expect(save?.args).toMatchObject({ options: { defaultPath: 'switchyard-config.json' } });
    expect(log.find((r) => r.name === 'export_config')?.args).toEqual({ slugs: null, path: '/home/user/switchyard-config.json' });
    const file = String(await fake((f) => f.portable.files['/home/user/switchyard-config.json']));
    expect(file).toContain('"routing": "balanced"');
    expect(file, 'no key in the file').not.toContain('sk-seed');

    await page.getByRole('button', { name: 'Open main' }).click();
    await fake((f) => (f.portable.savePath = '/home/user/main.json'));
    await page.getByRole('button', { name: 'Export main to a file' }).click();
    await page.getByTestId('export-message').waitFor();
    expect(await page.getByTestId('export-message').textContent()).toContain('to /home/user/main.json');
    expect((await ipc()).filter((r) => r.name === 'export_config').map((r) => r.args)).toContainEqual({ slugs: ['main'], path: '/home/user/main.json' });
    expect(errors).toEqual([]);
  });
});

describe('import', () => {
  it('previews, re-previews on skip, applies, and lists the disabled imported profiles', async () => {
    const { page, ipc, fake, errors } = await openApp('balanced');
    await fake((f, path) => {
      f.portable.files[path] = f.portable.export(null);
      f.portable.openPath = path;
    }, SHARED);
    await page.getByRole('button', { name: 'Import connections from a file' }).click();
    const dialog = page.getByRole('dialog', { name: 'Import configuration' });
    const row = dialog.getByTestId('import-row');
    await row.waitFor();
    expect(await row.getAttribute('data-action')).toBe('rename');
    const text = await row.textContent();
    expect(text).toContain('main-2');
    expect(text).toContain('balanced');
    expect(await dialog.textContent()).toContain('Nothing has been written yet');

    await dialog.getByTestId('import-conflict').selectOption('skip');
    await expect.poll(() => row.getAttribute('data-action')).toBe('skip');
    expect(await dialog.getByRole('button', { name: 'Import' }).isDisabled()).toBe(true);
    await dialog.getByTestId('import-conflict').selectOption('rename');
    await expect.poll(() => row.getAttribute('data-action')).toBe('rename');
    expect((await ipc()).some((r) => r.name === 'import_apply'), 'previews only').toBe(false);
    expect(await page.getByTestId('connection').count(), 'the preview wrote nothing').toBe(1);

    await dialog.getByRole('button', { name: 'Import' }).click();
    const done = page.getByRole('dialog', { name: 'Import done' });
    const message = done.getByTestId('import-message');
    await message.waitFor();
    expect(await message.textContent()).toContain('0 created, 1 renamed, 0 skipped');
    expect(await message.textContent()).toContain('disabled and have no keys');
    expect(await message.textContent()).toContain('pending until keys are added, enabled and verified');
    await done.getByRole('button', { name: 'Close' }).press('Enter');
    await done.waitFor({ state: 'detached' });
    await expect.poll(() => page.getByTestId('connection').count()).toBe(2);
    expect((await ipc()).filter((r) => r.name.startsWith('import_')).map((r) => [r.name, r.args])).toEqual([
      ['import_preview', { path: SHARED, onConflict: 'rename' }],
      ['import_preview', { path: SHARED, onConflict: 'skip' }],
      ['import_preview', { path: SHARED, onConflict: 'rename' }],
      ['import_apply', { path: SHARED, onConflict: 'rename' }],
    ]);
    const imported = await fake((f) => f.profiles.filter((p) => p.connectionId.startsWith('ci_')).map((p) => [p.enabled, p.hasSecret]));
    expect(imported).toEqual([[false, false], [false, false]]);
    expect(errors).toEqual([]);
  });

  it('shows a bad file’s path-named error and offers no import', async () => {
    const { page, ipc, fake } = await openApp('two-profiles');
    await fake((f, path) => {
      const doc = JSON.parse(f.portable.export(null));
      doc.connections[0].profiles[1].weight = 5000;
      f.portable.files[path] = JSON.stringify(doc);
      f.portable.openPath = path;
    }, SHARED);
    await page.getByRole('button', { name: 'Import connections from a file' }).click();
    const dialog = page.getByRole('dialog', { name: 'Import configuration' });
    const alert = dialog.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('connections[0].profiles[1].weight: must be between 1 and 1000 (got 5000)');
    expect(await dialog.getByRole('button', { name: 'Import' }).isDisabled()).toBe(true);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect((await ipc()).some((r) => r.name === 'import_apply')).toBe(false);
    expect(await page.getByTestId('connection').count()).toBe(1);
  });
});
