import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import { useFake } from '../test/fake';
import { ConnectionsStore } from './connectionList.svelte';
import ConnectionList from './ConnectionList.svelte';
import ImportDialog from './ImportDialog.svelte';
import { ExportAction, ImportFlow, exportFileName, importedText } from './portable.svelte';

const SHARED = '/home/user/shared.json';

/** A seeded fake whose open dialog answers a file exported from it. */
async function withSharedFile(seed = 'two-profiles') {
  const env = await useFake(seed);
  env.fake.portable.files[SHARED] = env.fake.portable.export(null);
  env.fake.portable.openPath = SHARED;
  return env;
}

describe('ExportAction', () => {
  it('asks where to write through the save dialog, then exports without keys', async () => {
    const { fake, log } = await useFake('two-profiles');
    const action = new ExportAction();
    await action.run(null);
    expect(fake.portable.dialogs[0]).toMatchObject({ kind: 'save', options: { defaultPath: 'switchyard-config.json' } });
    expect(log.find((r) => r.name === 'export_config')?.args).toEqual({ slugs: null, path: '/home/user/switchyard-config.json' });
    expect(action.message).toBe('Exported 1 connection to /home/user/switchyard-config.json. The file holds no keys.');
    const file = fake.portable.files['/home/user/switchyard-config.json'];
    expect(file).toContain('"switchyard.config"');
    expect(file).not.toContain('sk-seed');
  });

  it('exports one connection, and does nothing when the dialog is cancelled', async () => {
    const { fake, log } = await useFake('two-profiles');
    const action = new ExportAction();
    await action.run('main');
    expect(log.find((r) => r.name === 'export_config')?.args).toMatchObject({ slugs: ['main'] });
    expect(exportFileName('main')).toBe('switchyard-main.json');
    fake.portable.savePath = null;
    log.length = 0;
    await action.run(null);
    expect(log.map((r) => r.name)).toEqual(['plugin:dialog|save']);
    expect(action.message).toBeNull();
    expect(action.error).toBeNull();
  });

  it('shows a failing dialog or export as an error', async () => {
    const dialogs = { save: vi.fn(async () => Promise.reject(new Error('no portal'))), open: vi.fn() };
    const action = new ExportAction(undefined, dialogs as never);
    await action.run(null);
    expect(action.error?.code).toBe('unreachable');
    expect(action.error?.message).toContain('no portal');
    expect(action.busy).toBe(false);
  });
});

describe('ImportFlow', () => {
  it('previews without writing, re-runs the preview on skip, then applies', async () => {
    const { fake, log } = await withSharedFile();
    const flow = new ImportFlow();
    await flow.start();
    expect(flow.path).toBe(SHARED);
    expect(flow.preview?.connections[0]).toMatchObject({ action: 'rename', new_slug: 'main-2' });
    expect(fake.connections).toHaveLength(1);
    await flow.choose('skip');
    expect(log.filter((r) => r.name === 'import_preview').map((r) => r.args)).toEqual([
      { path: SHARED, onConflict: 'rename' },
      { path: SHARED, onConflict: 'skip' },
    ]);
    expect(flow.preview?.skipped).toBe(1);
    await flow.choose('rename');
    expect(await flow.apply()).toBe(true);
    expect(flow.result?.renamed).toBe(1);
    const imported = fake.profiles.filter((p) => p.connectionId !== fake.connections[0].id);
    expect(imported.map((p) => [p.enabled, p.hasSecret])).toEqual([[false, false], [false, false]]);
  });

  it('does nothing when the open dialog is cancelled', async () => {
    const { fake, log } = await withSharedFile();
    fake.portable.openPath = null;
    const flow = new ImportFlow();
    await flow.start();
    expect(flow.active).toBe(false);
    expect(log.map((r) => r.name)).toEqual(['plugin:dialog|open']);
  });

  it('keeps the path-named error of a bad file', async () => {
    const { fake } = await useFake('two-profiles');
    const doc = JSON.parse(fake.portable.export(null));
    doc.connections[0].profiles[1].weight = 0;
    fake.portable.files[SHARED] = JSON.stringify(doc);
    const flow = new ImportFlow();
    await flow.start();
    expect(flow.preview).toBeNull();
    expect(flow.error?.code).toBe('invalid');
    expect(flow.error?.message).toContain('connections[0].profiles[1].weight');
  });

  it('says that profiles arrive disabled without keys and which modes are pending', () => {
    const text = importedText({
      dry_run: false,
      created: 1,
      renamed: 0,
      skipped: 0,
      connections: [{ ref: 'c1', slug: 'a', action: 'create', new_slug: 'a', pending_mode: 'balanced', profiles: [] }],
    });
    expect(text).toContain('1 created, 0 renamed, 0 skipped');
    expect(text).toContain('disabled and have no keys');
    expect(text).toContain('routing mode of 1 connection is pending');
  });
});

describe('ImportDialog', () => {
  it('lists the preview, switches to skip from the keyboard-reachable select, and imports', async () => {
    await withSharedFile();
    const flow = new ImportFlow();
    await flow.start();
    const onimported = vi.fn();
    render(ImportDialog, { flow, onimported });
    expect(screen.getByRole('dialog', { name: 'Import configuration' })).toBeTruthy();
    const row = screen.getByTestId('import-row');
    expect(row.dataset.action).toBe('rename');
    expect(row.textContent).toContain('main-2');
    expect(row.textContent).toContain('primary (primary), backup');
    await fireEvent.change(screen.getByTestId('import-conflict'), { target: { value: 'skip' } });
    await waitFor(() => expect(screen.getByTestId('import-row').dataset.action).toBe('skip'));
    expect((screen.getByRole('button', { name: 'Import' }) as HTMLButtonElement).disabled, 'nothing to import').toBe(true);
    await fireEvent.change(screen.getByTestId('import-conflict'), { target: { value: 'rename' } });
    await waitFor(() => expect(screen.getByTestId('import-row').dataset.action).toBe('rename'));
    await fireEvent.click(screen.getByRole('button', { name: 'Import' }));
    await waitFor(() => expect(onimported).toHaveBeenCalledOnce());
    expect(screen.getByTestId('import-message').textContent).toContain('disabled and have no keys');
  });
});

describe('ConnectionList export and import', () => {
  it('exports all connections and imports through the preview, refreshing the list', async () => {
    await withSharedFile();
    const store = new ConnectionsStore();
    await store.refresh();
    render(ConnectionList, { store, onopen: () => {} });
    await fireEvent.click(screen.getByRole('button', { name: 'Export all connections to a file' }));
    await waitFor(() => expect(screen.getByTestId('export-message').textContent).toContain('Exported 1 connection'));
    await fireEvent.click(screen.getByRole('button', { name: 'Import connections from a file' }));
    await waitFor(() => expect(screen.getByTestId('import-preview')).toBeTruthy());
    await fireEvent.click(screen.getByRole('button', { name: 'Import' }));
    await waitFor(() => expect(store.items.map((d) => d.connection.slug)).toEqual(['main', 'main-2']));
    await fireEvent.click(screen.getByRole('button', { name: 'Close' }));
    expect(screen.queryByRole('dialog')).toBeNull();
  });
});
