import { clearMocks, mockIPC } from '@tauri-apps/api/mocks';
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, describe, expect, it } from 'vitest';
import ClientSetup from './ClientSetup.svelte';

afterEach(() => clearMocks());

type Args = Record<string, unknown>;

/** A backend for the four client commands: one Claude Code settings file, held in memory. */
function backend(opts: { plainKey?: boolean } = {}) {
  const calls: { cmd: string; args: Args }[] = [];
  const file = { text: '{\n  "theme": "dark"\n}\n', hash: 'h1', pointed: false, restorable: false, movedProfile: false };
  const path = '/home/u/.claude/settings.json';
  const status = () => ({
    client: 'claude-code',
    path,
    exists: true,
    pointed: file.pointed,
    slug: file.pointed ? 'main' : null,
    port: file.pointed ? 4141 : null,
    token_current: file.pointed,
    restorable: file.restorable,
    plain_keys: opts.plainKey && !file.movedProfile ? ['env.ANTHROPIC_API_KEY'] : [],
  });
  const preview = (args: Args) => ({
    client: 'claude-code',
    path,
    slug: 'main',
    base_url: 'http://127.0.0.1:4141/c/main',
    exists: true,
    diff: `--- ${path}\n+++ ${path}\n@@ -1,3 +1,7 @@\n {\n-  "theme": "dark"\n+  "theme": "dark",\n+  "env": {\n+    "ANTHROPIC_AUTH_TOKEN": "<relay token>"\n+  }\n }\n${args.moveKey ? '-    "ANTHROPIC_API_KEY": "<provider key>"\n' : ''}`,
    changes: !file.pointed,
    file_hash: file.hash,
    plain_keys: opts.plainKey && !file.movedProfile ? ['env.ANTHROPIC_API_KEY'] : [],
    notes: [],
  });
  mockIPC((cmd, payload) => {
    const args = (payload ?? {}) as Args;
    calls.push({ cmd, args });
    if (cmd === 'client_status') return status();
    if (cmd === 'client_preview') return preview(args);
    if (cmd === 'client_setup') {
      if (args.fileHash !== file.hash) {
        throw { code: 'conflict', message: `${path} changed since the preview; preview again and retry — nothing was written`, gates: null };
      }
      const p = preview(args);
      file.pointed = true;
      file.restorable = true;
      file.hash = 'h2';
      file.movedProfile = Boolean(args.moveKey);
      const moved = args.moveKey ? { id: 'p_1', label: args.moveKey, connection_id: 'c', weight: 1, priority: 1, enabled: true, primary: false, credential: 'present', credential_revision: 1, revision: 1, created_at: '', updated_at: '' } : null;
      return { preview: p, written: true, backup: '/data/client-backups/claude-code-x', moved_to: moved };
    }
    if (cmd === 'client_restore') {
      file.pointed = false;
      file.restorable = false;
      file.hash = 'h1';
      return { client: 'claude-code', path, restored: true, removed: false };
    }
    throw { code: 'internal', message: `unexpected ${cmd}`, gates: null };
  });
  return { calls, file };
}

describe('ClientSetup', () => {
  it('previews the diff, applies it with the previewed hash, shows the new state and restores', async () => {
    const { calls } = backend();
    render(ClientSetup, { slug: 'main', protocol: 'anthropic' });
    const options = screen.getAllByRole('option').map((o) => o.textContent);
    expect(options, 'an anthropic connection offers Claude Code and opencode, not Codex').toEqual(['Claude Code', 'opencode']);
    await waitFor(() => expect(screen.getByTestId('client-state').dataset.pointed).toBe('false'));

    await fireEvent.click(screen.getByRole('button', { name: 'Preview change' }));
    await waitFor(() => expect(screen.getByTestId('client-diff').textContent).toContain('+    "ANTHROPIC_AUTH_TOKEN": "<relay token>"'));
    expect(calls.some((c) => c.cmd === 'client_setup'), 'a preview writes nothing').toBe(false);

    await fireEvent.click(screen.getByRole('button', { name: 'Apply to Claude Code' }));
    await waitFor(() => expect(screen.getByTestId('client-done').textContent).toContain('Wrote /home/u/.claude/settings.json'));
    const setup = calls.find((c) => c.cmd === 'client_setup');
    expect(setup?.args, 'the write names the hash of the previewed file').toMatchObject({ client: 'claude-code', slug: 'main', fileHash: 'h1', moveKey: null });
    await waitFor(() => expect(screen.getByTestId('client-state').textContent).toContain('points at this connection'));

    await fireEvent.click(screen.getByRole('button', { name: 'Restore original' }));
    await waitFor(() => expect(screen.getByTestId('client-done').textContent).toContain('Restored'));
    expect(screen.getByTestId('client-state').dataset.pointed).toBe('false');
  });

  it('offers Gemini CLI, and only it, for a gemini connection', async () => {
    backend();
    render(ClientSetup, { slug: 'gem', protocol: 'gemini' });
    const options = screen.getAllByRole('option').map((o) => o.textContent);
    expect(options, 'opencode speaks OpenAI or Anthropic, not Gemini’s own API').toEqual(['Gemini CLI']);
  });

  it('refuses to write a file that changed since the preview and offers to preview again', async () => {
    const { file } = backend();
    render(ClientSetup, { slug: 'main', protocol: 'anthropic' });
    await fireEvent.click(await screen.findByRole('button', { name: 'Preview change' }));
    await screen.findByTestId('client-diff');
    file.hash = 'edited-elsewhere';
    await fireEvent.click(screen.getByRole('button', { name: 'Apply to Claude Code' }));
    const error = await screen.findByTestId('error');
    expect(error.dataset.code).toBe('conflict');
    expect(error.textContent).toContain('changed since the preview');
    expect(file.pointed, 'nothing was written').toBe(false);
  });

  it('moves a plain-text key into the keychain only when the box is ticked', async () => {
    const { calls } = backend({ plainKey: true });
    render(ClientSetup, { slug: 'main', protocol: 'anthropic' });
    await fireEvent.click(await screen.findByRole('button', { name: 'Preview change' }));
    const box = await screen.findByRole('checkbox');
    await fireEvent.click(box);
    await waitFor(() => expect(calls.filter((c) => c.cmd === 'client_preview').at(-1)?.args.moveKey).toBe('from-client'));
    await fireEvent.click(screen.getByRole('button', { name: 'Apply to Claude Code' }));
    await waitFor(() => expect(screen.getByTestId('client-done').textContent).toContain('profile "from-client"'));
    expect(calls.find((c) => c.cmd === 'client_setup')?.args.moveKey).toBe('from-client');
  });
});
