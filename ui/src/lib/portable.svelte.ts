// Export and import of shared configurations (issue 7): the save dialog picks where an export
// goes; the open dialog picks a file whose dry-run preview lists what would be created, renamed
// or skipped, re-run when the conflict choice changes, before the import is applied. A dropped
// file or text pasted from chat (issue 17) gets the same preview through the text commands.
import { open, save } from '@tauri-apps/plugin-dialog';
import { commands, type ConflictPolicy } from '../bindings';
import { attempt, unwrap, type Failure } from './errors';
import type { ImportReport } from './types';

export type Backend = Pick<typeof commands, 'exportConfig' | 'importPreview' | 'importApply' | 'importTextPreview' | 'importTextApply'>;
export interface Dialogs {
  save: typeof save;
  open: typeof open;
}
/** What an import does with a name that exists here (the engine's `ConflictPolicy`). */
export type ConflictChoice = ConflictPolicy;

const FILTERS = [{ name: 'Switchyard configuration', extensions: ['json'] }];
/** The format's limit (the engine refuses more too). */
export const MAX_IMPORT_BYTES = 1024 * 1024;

function tooBig(bytes: number): Failure {
  return {
    code: 'invalid',
    title: 'Some input was not valid.',
    message: `That is ${bytes} bytes; a shared configuration is at most ${MAX_IMPORT_BYTES} bytes (1 MiB).`,
    gates: null,
  };
}

/** A dropped file's text (FileReader: every WebView has it, jsdom too). */
function readText(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result ?? ''));
    reader.onerror = () => reject(reader.error ?? new Error('the file could not be read'));
    reader.readAsText(file);
  });
}

/** Where the previewed configuration came from, in words. */
export function sourceText(path: string | null, textName: string | null, text: string | null): string {
  if (path !== null) return `File: ${path}`;
  if (textName !== null) return `Dropped file: ${textName}`;
  if (text !== null) return `Pasted text (${new TextEncoder().encode(text).length} bytes)`;
  return '';
}

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
  /** A pasted configuration, or a dropped file's content (then `textName` is its name). */
  text = $state<string | null>(null);
  textName = $state<string | null>(null);
  /** The dialog is open on its paste/drop form, nothing chosen yet. */
  composing = $state(false);
  choice = $state<ConflictChoice>('rename');
  preview = $state<ImportReport | null>(null);
  result = $state<ImportReport | null>(null);
  error = $state<Failure | null>(null);
  busy = $state(false);

  constructor(
    private readonly backend: Backend = commands,
    private readonly dialogs: Dialogs = { save, open },
  ) {}

  /** Whether the dialog is showing (composing, or a file or text chosen). */
  get active(): boolean {
    return this.path !== null || this.text !== null || this.composing;
  }

  /** Opens the dialog on its paste/drop form. */
  compose(): void {
    this.close();
    this.composing = true;
  }

  /** Previews pasted text (or a dropped file's content, named `name`). */
  async startText(text: string, name: string | null = null): Promise<void> {
    const bytes = new TextEncoder().encode(text).length;
    if (bytes > MAX_IMPORT_BYTES) {
      this.error = tooBig(bytes);
      return;
    }
    if (text.trim() === '') {
      this.error = { code: 'invalid', title: 'Some input was not valid.', message: 'Paste a Switchyard configuration (the JSON an export writes) first.', gates: null };
      return;
    }
    this.path = null;
    this.text = text;
    this.textName = name;
    this.composing = false;
    this.choice = 'rename';
    this.result = null;
    await this.refresh();
  }

  /** Previews a dropped file: its content goes to the engine like pasted text. */
  async startFile(file: File): Promise<void> {
    if (file.size > MAX_IMPORT_BYTES) {
      this.error = tooBig(file.size);
      return;
    }
    const read = await attempt(() => readText(file));
    if (!read.ok) {
      this.error = read.failure;
      return;
    }
    await this.startText(read.data, file.name);
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
    this.text = null;
    this.textName = null;
    this.composing = false;
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
    const { path, text } = this;
    if (path === null && text === null) return;
    this.busy = true;
    const out = await attempt(() =>
      unwrap(path !== null ? this.backend.importPreview(path, this.choice) : this.backend.importTextPreview(text ?? '', this.choice)),
    );
    this.preview = out.ok ? out.data : null;
    this.error = out.ok ? null : out.failure;
    this.busy = false;
  }

  /** Applies the import as previewed; true when it was written. */
  async apply(): Promise<boolean> {
    const { path, text } = this;
    if (path === null && text === null) return false;
    this.busy = true;
    const out = await attempt(() =>
      unwrap(path !== null ? this.backend.importApply(path, this.choice) : this.backend.importTextApply(text ?? '', this.choice)),
    );
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
    this.text = null;
    this.textName = null;
    this.composing = false;
    this.preview = null;
    this.result = null;
    this.error = null;
    this.choice = 'rename';
  }
}
