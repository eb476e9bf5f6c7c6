// `@tauri-apps/plugin-dialog` in the console build: files of this machine are the desktop's
// (export and import are absent from the console); a stray call says so.
export async function save(): Promise<string | null> {
  throw new Error('saving files is the desktop app’s, not the console’s');
}

export async function open(): Promise<string | string[] | null> {
  throw new Error('opening files is the desktop app’s, not the console’s');
}
