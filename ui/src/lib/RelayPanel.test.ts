import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import { useFake } from '../test/fake';
import { ConnectionsStore } from './connectionList.svelte';
import { RelayStore } from './relay.svelte';
import RelayPanel from './RelayPanel.svelte';

async function panel(seed = 'two-profiles') {
  const env = await useFake(seed);
  const relay = new RelayStore();
  await relay.start();
  const connections = new ConnectionsStore();
  await connections.refresh();
  render(RelayPanel, { relay, connections, selected: 'main' });
  return { ...env, relay };
}

describe('RelayPanel', () => {
  it('shows the URL and status, keeps the token hidden until asked, and fills client settings', async () => {
    const { fake, log } = await panel();
    expect(screen.getByTestId('relay-status').dataset.state).toBe('listening');
    expect(screen.getByTestId('relay-url').textContent).toBe('http://127.0.0.1:4141');
    expect(screen.getByTestId('client-base-url').textContent).toBe('http://127.0.0.1:4141/c/main/v1');
    expect(document.body.textContent, 'the token is hidden by default').not.toContain(fake.relay.token);
    expect(log.some((r) => r.name === 'relay_token'), 'not even fetched').toBe(false);
    expect(screen.getAllByTestId('snippet').map((s) => s.dataset.id)).toEqual(['codex', 'opencode', 'openai-sdk']);

    await fireEvent.click(screen.getByRole('button', { name: 'Show' }));
    await waitFor(() => expect(screen.getByTestId('relay-token').textContent).toBe(fake.relay.token));
    expect(document.body.textContent).toContain(`OPENAI_API_KEY=${fake.relay.token}`);
    await fireEvent.click(screen.getByRole('button', { name: 'Hide' }));
    expect(document.body.textContent).not.toContain(fake.relay.token);
  });

  it('copies a snippet with the real token while it stays hidden', async () => {
    const { fake } = await panel();
    const writeText = vi.fn(async () => {});
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    await fireEvent.click(screen.getByRole('button', { name: 'Copy OpenAI SDK settings' }));
    await waitFor(() => expect(writeText).toHaveBeenCalledOnce());
    expect(writeText.mock.calls[0]).toEqual([expect.stringContaining(`OPENAI_API_KEY=${fake.relay.token}`)]);
    expect(screen.getByTestId('copied').textContent).toBe('Copied OpenAI SDK.');
    expect(document.body.textContent).not.toContain(fake.relay.token);
  });

  it('rotates the token only after confirmation', async () => {
    const { fake, log } = await panel();
    const before = fake.relay.token;
    await fireEvent.click(screen.getByRole('button', { name: 'Rotate…' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(log.some((r) => r.name === 'relay_token'), 'cancel sends nothing').toBe(false);
    await fireEvent.click(screen.getByRole('button', { name: 'Rotate…' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Rotate token' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(fake.relay.token).not.toBe(before);
    expect(log.find((r) => r.name === 'relay_token')?.args).toEqual({ rotate: true });
  });

  it('explains a taken port and retries', async () => {
    const env = await useFake('two-profiles');
    env.fake.relay.portTaken = true;
    const relay = new RelayStore();
    await relay.start();
    render(RelayPanel, { relay, connections: new ConnectionsStore(), selected: null });
    expect(screen.getByTestId('relay-status').dataset.state).toBe('error');
    expect(screen.getByTestId('relay-error').textContent).toContain('port 4141 is already in use');
    env.fake.relay.portTaken = false;
    await fireEvent.click(screen.getByRole('button', { name: 'Retry' }));
    await waitFor(() => expect(screen.getByTestId('relay-status').dataset.state).toBe('listening'));
  });

  it('shows Claude Code settings for an anthropic connection', async () => {
    const env = await useFake('empty');
    await env.fake.handle('connection_add', {
      input: { slug: 'claude', protocol: 'anthropic', base_url: 'https://api.anthropic.com', models: ['claude-x'], mappings: [], headers: [] },
      secret: 'sk-ant-seed',
    });
    const relay = new RelayStore();
    await relay.start();
    const connections = new ConnectionsStore();
    await connections.refresh();
    render(RelayPanel, { relay, connections, selected: null });
    await waitFor(() => expect(screen.getAllByTestId('snippet').map((s) => s.dataset.id)).toEqual(['claude-code', 'anthropic-sdk']));
    expect(screen.getAllByTestId('snippet')[0].textContent).toContain('ANTHROPIC_BASE_URL=http://127.0.0.1:4141/c/claude');
  });
});
