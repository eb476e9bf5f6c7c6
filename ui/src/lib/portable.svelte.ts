// Export and import of shared configurations (issue 7): the save dialog picks where an export
// goes; the open dialog picks a file whose dry-run preview lists what would be created, renamed
// or skipped, re-run when the conflict choice changes, before the import is applied.
import { open, save } from '@tauri-apps/plugin-dialog';
import { commands } from '../bindings';
import { attempt, unwrap, type Failure } from './errors';
import type { ImportReport } from './types';

export type Backend = Pick<typeof commands, 'exportConfig' | 'importPreview' | 'importApply'>;
export interface Dialogs {
  save: typeof save;
  open: typeof open;
}
export type ConflictChoice = 'rename' | 'skip';

const FILTERS = [{ name: 'Switchyard configuration', extensions: ['json'] }];

/** The file name the save dialog proposes. */
export function exportFileName(slug: string | null): string {
  return slug ? `switchyard-${slug}.json` : 'switchyard-config.json';
}

/** The outcome of an export, in words. */
export function exportedText(path: string, connections: number): string {
  const what = connections === 1 ? '1 connection' : `${connections} connections`;
  return `Exported ${what} to ${path}. The file holds no keys.`;
}

/** The outcome of an applied import, in words. */
export function importedText(r: ImportReport): string {
  const parts = [`${r.created} created`, `${r.renamed} renamed`, `${r.skipped} skipped`];
  const pending = r.connections.filter((c) => c.pending_mode !== null).length;
  const tail = pending > 0 ? ` The wanted routing mode of ${pending === 1 ? '1 connection' : `${pending} connections`} is pending until keys are added, enabled and verified.` : '';
  return `Imported: ${parts.join(', ')}. Imported profiles are disabled and have no keys; add a key to each and enable it.${tail}`;
}

export class ExportAction {
  busy = $state(false);
  message = $state<string | null>(null);
  error = $state<Failure | null>(null);

  constructor(
    private readonly backend: Backend = commands,
    private readonly dialogs: Dialogs = { save, open },
  ) {}

  /** Asks where to write, then exports every connection (`slug` null) or that one. */
  async run(slug: string | null): Promise<void> {
    this.busy = true;
    this.message = null;
    this.error = null;
    const out = await attempt(async () => {
      const path = await this.dialogs.save({ title: 'Export configuration', defaultPath: exportFileName(slug), filters: FILTERS });
      if (path === null) return null;
      return unwrap(this.backend.exportConfig(slug === null ? null : [slug], path));
    });
    if (!out.ok) this.error = out.failure;
    else if (out.data) this.message = exportedText(out.data.path, out.data.connections);
    this.busy = false;
  }
}

export class ImportFlow {
  path = $state<string | null>(null);
  choice = $state<ConflictChoice>('rename');
  preview = $state<ImportReport | null>(null);
  result = $state<ImportReport | null>(null);
  error = $state<Failure | null>(null);
  busy = $state(false);

  constructor(
    private readonly backend: Backend = commands,
    private readonly dialogs: Dialogs = { save, open },
  ) {}

  /** Whether the preview dialog is showing (a file was chosen). */
  get active(): boolean {
    return this.path !== null;
  }

  /** Asks for a file, then previews it. Cancelling the dialog leaves everything as it was. */
  async start(): Promise<void> {
    const picked = await attempt(() => this.dialogs.open({ title: 'Import configuration', multiple: false, directory: false, filters: FILTERS }));
    if (!picked.ok) {
      this.error = picked.failure;
      return;
    }
    const path = typeof picked.data === 'string' ? picked.data : null;
    if (path === null) return;
    this.path = path;
    this.choice = 'rename';
    this.result = null;
    await this.refresh();
  }

  /** Changes how taken slugs are handled and previews again. */
  async choose(choice: ConflictChoice): Promise<void> {
    this.choice = choice;
    await this.refresh();
  }

  /** The dry run for the chosen file and choice; writes nothing. */
  async refresh(): Promise<void> {
    const path = this.path;
    if (path === null) return;
    this.busy = true;
    const out = await attempt(() => unwrap(this.backend.importPreview(path, this.choice)));
    this.preview = out.ok ? out.data : null;
    this.error = out.ok ? null : out.failure;
    this.busy = false;
  }

  /** Applies the import as previewed; true when it was written. */
  async apply(): Promise<boolean> {
    const path = this.path;
    if (path === null) return false;
    this.busy = true;
    const out = await attempt(() => unwrap(this.backend.importApply(path, this.choice)));
    this.busy = false;
    if (!out.ok) {
      this.error = out.failure;
      return false;
    }
    this.error = null;
    this.result = out.data;
    return true;
  }

  close(): void {
    this.path = null;
    this.preview = null;
    this.result = null;
    this.error = null;
    this.choice = 'rename';
  }
}
