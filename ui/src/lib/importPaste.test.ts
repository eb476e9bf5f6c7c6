// Issue 17: a configuration pasted from chat or a dropped file gets the same preview as a file
// chosen in the open dialog, through the text commands; nothing is written before "Import".
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import { useFake } from '../test/fake';
import { ConnectionsStore } from './connectionList.svelte';
import ConnectionList from './ConnectionList.svelte';
import ImportDialog from './ImportDialog.svelte';
import { ImportFlow, MAX_IMPORT_BYTES, sourceText } from './portable.svelte';

/** A drop event carrying `files` (jsdom has no DataTransfer constructor). */
function dropOf(...files: File[]) {
  return { dataTransfer: { files, dropEffect: 'none', types: ['Files'] } };
}

describe('ImportFlow with pasted or dropped text', () => {
  it('previews pasted text without writing, then applies it', async () => {
    const { fake, log } = await useFake('two-profiles');
    const text = `\n  ${fake.portable.export(null)}\n`;
    const flow = new ImportFlow();
    flow.compose();
    expect(flow.active, 'the paste form is showing').toBe(true);
    await flow.startText(text);
    expect(flow.composing).toBe(false);
    expect(flow.preview?.connections[0]).toMatchObject({ action: 'rename', new_slug: 'main-2' });
    expect(fake.connections, 'the preview wrote nothing').toHaveLength(1);
    await flow.choose('skip');
    expect(flow.preview?.skipped).toBe(1);
    await flow.choose('rename');
    expect(await flow.apply()).toBe(true);
    expect(log.filter((r) => r.name.startsWith('import_')).map((r) => r.name)).toEqual([
      'import_text_preview',
      'import_text_preview',
      'import_text_preview',
      'import_text_apply',
    ]);
    expect(log.find((r) => r.name === 'import_text_apply')?.args).toEqual({ text, onConflict: 'rename' });
    expect(fake.connections.map((c) => c.slug).sort()).toEqual(['main', 'main-2']);
  });

  it('refuses empty and oversized text before asking the engine', async () => {
    const { log } = await useFake('two-profiles');
    const flow = new ImportFlow();
    flow.compose();
    await flow.startText('   \n');
    expect(flow.error?.code).toBe('invalid');
    await flow.startText('x'.repeat(MAX_IMPORT_BYTES + 1));
    expect(flow.error?.message).toContain('1 MiB');
    await flow.startFile(new File(['y'.repeat(MAX_IMPORT_BYTES + 1)], 'big.json'));
    expect(flow.error?.message).toContain('1 MiB');
    expect(flow.composing, 'the form stays open to try again').toBe(true);
    expect(log.filter((r) => r.name.startsWith('import_'))).toEqual([]);
  });

  it('shows the engine’s path-named error for a bad paste', async () => {
    const { fake } = await useFake('two-profiles');
    const doc = JSON.parse(fake.portable.export(null));
    doc.connections[0].profiles[1].weight = 0;
    const flow = new ImportFlow();
    await flow.startText(JSON.stringify(doc));
    expect(flow.preview).toBeNull();
    expect(flow.error?.code).toBe('invalid');
    expect(flow.error?.message).toContain('connections[0].profiles[1].weight');
  });

  it('names the source in words', () => {
    expect(sourceText('/a.json', null, null)).toBe('File: /a.json');
    expect(sourceText(null, 'team.json', '{}')).toBe('Dropped file: team.json');
    expect(sourceText(null, null, 'é{}')).toBe('Pasted text (4 bytes)');
  });
});

describe('ImportDialog paste and drop', () => {
  it('pastes a configuration, previews it and imports', async () => {
    const { fake } = await useFake('two-profiles');
    const flow = new ImportFlow();
    flow.compose();
    let imported = 0;
    render(ImportDialog, { flow, onimported: () => imported++ });
    const preview = screen.getByRole('button', { name: 'Preview' }) as HTMLButtonElement;
    expect(preview.disabled, 'nothing pasted yet').toBe(true);
    await fireEvent.input(screen.getByLabelText(/^Or paste the configuration/), { target: { value: fake.portable.export(null) } });
    expect(preview.disabled).toBe(false);
    await fireEvent.click(preview);
    await waitFor(() => expect(screen.getByTestId('import-preview')).toBeTruthy());
    expect(screen.getByTestId('import-source').textContent).toMatch(/^Pasted text \(\d+ bytes\)$/);
    expect(screen.getByTestId('import-row').dataset.action).toBe('rename');
    await fireEvent.click(screen.getByRole('button', { name: 'Import' }));
    await waitFor(() => expect(imported).toBe(1));
    expect(screen.getByTestId('import-message').textContent).toContain('1 renamed');
  });

  it('previews a file dropped on the drop zone', async () => {
    const { fake, log } = await useFake('two-profiles');
    const flow = new ImportFlow();
    flow.compose();
    render(ImportDialog, { flow, onimported: () => {} });
    const zone = screen.getByTestId('import-drop');
    await fireEvent.dragOver(zone, dropOf());
    expect(zone.classList.contains('over'), 'the zone shows it will take the drop').toBe(true);
    await fireEvent.drop(zone, dropOf(new File([fake.portable.export(null)], 'team.json', { type: 'application/json' })));
    await waitFor(() => expect(screen.getByTestId('import-preview')).toBeTruthy());
    expect(screen.getByTestId('import-source').textContent).toBe('Dropped file: team.json');
    expect(log.find((r) => r.name === 'import_text_preview')?.args).toMatchObject({ onConflict: 'rename' });
    expect(fake.connections).toHaveLength(1);
  });

  it('shows an oversized drop as an error and keeps the form', async () => {
    await useFake('two-profiles');
    const flow = new ImportFlow();
    flow.compose();
    render(ImportDialog, { flow, onimported: () => {} });
    await fireEvent.drop(screen.getByTestId('import-drop'), dropOf(new File(['z'.repeat(MAX_IMPORT_BYTES + 1)], 'huge.json')));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toContain('1 MiB'));
    expect(screen.getByTestId('import-text')).toBeTruthy();
  });
});

describe('ConnectionList paste and drop', () => {
  it('"Paste or drop…" opens the form; a file dropped on the list previews directly', async () => {
    const { fake } = await useFake('two-profiles');
    const store = new ConnectionsStore();
    await store.refresh();
    render(ConnectionList, { store, onopen: () => {} });
    await fireEvent.click(screen.getByRole('button', { name: 'Import a pasted or dropped configuration' }));
    expect(screen.getByTestId('import-drop')).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    const list = screen.getByRole('region', { name: 'Connections' });
    await fireEvent.drop(list, dropOf(new File([fake.portable.export(null)], 'shared.json')));
    await waitFor(() => expect(screen.getByTestId('import-preview')).toBeTruthy());
    await fireEvent.click(screen.getByRole('button', { name: 'Import' }));
    await waitFor(() => expect(store.items.map((d) => d.connection.slug)).toEqual(['main', 'main-2']));
  });
});
