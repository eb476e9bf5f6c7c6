import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import ConnectionForm from './ConnectionForm.svelte';
import { emptyConnectionForm } from './forms';

describe('ConnectionForm', () => {
  it('masks header values that look secret, with a toggle to show them', async () => {
    const initial = { ...emptyConnectionForm(), headers: [{ name: 'X-Session-Token', value: 'abc' }, { name: 'OpenAI-Organization', value: 'org-1' }] };
    render(ConnectionForm, { mode: 'edit', initial, onsubmit: async () => null, oncancel: () => {} });
    const secretish = screen.getByLabelText('Header value 1') as HTMLInputElement;
    const plain = screen.getByLabelText('Header value 2') as HTMLInputElement;
    expect(secretish.type).toBe('password');
    expect(plain.type).toBe('text');
    await fireEvent.click(screen.getByRole('button', { name: 'Show' }));
    expect(secretish.type).toBe('text');
  });

  it('submits the typed values and the optional legacy key, then forgets the key', async () => {
    const onsubmit = vi.fn(async () => null);
    render(ConnectionForm, { mode: 'add', initial: emptyConnectionForm(), onsubmit, oncancel: () => {} });
    await fireEvent.input(screen.getByLabelText('Name (slug)'), { target: { value: 'main' } });
    await fireEvent.change(screen.getByLabelText('Protocol'), { target: { value: 'anthropic' } });
    await fireEvent.input(screen.getByLabelText('Base URL'), { target: { value: 'https://api.anthropic.com' } });
    await fireEvent.input(screen.getByLabelText(/^Models/), { target: { value: 'claude-a' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Add header' }));
    await fireEvent.input(screen.getByLabelText('Header name 1'), { target: { value: 'anthropic-version' } });
    await fireEvent.input(screen.getByLabelText('Header value 1'), { target: { value: '2023-06-01' } });
    const key = screen.getByLabelText(/^API key/) as HTMLInputElement;
    await fireEvent.input(key, { target: { value: 'sk-ant-legacy' } });
    await fireEvent.submit(screen.getByTestId('connection-form'));
    expect(onsubmit).toHaveBeenCalledWith(
      { slug: 'main', protocol: 'anthropic', baseUrl: 'https://api.anthropic.com', models: 'claude-a', mappings: '', headers: [{ name: 'anthropic-version', value: '2023-06-01' }] },
      'sk-ant-legacy',
    );
    expect(key.value).toBe('');
  });

  it('has no key field when editing', () => {
    render(ConnectionForm, { mode: 'edit', initial: emptyConnectionForm(), onsubmit: async () => null, oncancel: () => {} });
    expect(screen.queryByLabelText(/^API key/)).toBeNull();
    expect(screen.queryByLabelText('Name (slug)')).toBeNull();
  });

  it('a provider preset fills protocol, base URL and models, then the submit carries them', async () => {
    const onsubmit = vi.fn(async () => null);
    render(ConnectionForm, { mode: 'add', initial: emptyConnectionForm(), onsubmit, oncancel: () => {} });
    await fireEvent.change(screen.getByLabelText(/^Provider/), { target: { value: 'zhipu' } });
    expect((screen.getByLabelText('Base URL') as HTMLInputElement).value).toBe('https://api.z.ai/api/paas/v4');
    expect(screen.getByTestId('preset-note').textContent).toContain('open.bigmodel.cn');
    await fireEvent.change(screen.getByLabelText(/^Provider/), { target: { value: 'anthropic' } });
    expect((screen.getByLabelText('Protocol') as HTMLSelectElement).value).toBe('anthropic');
    await fireEvent.input(screen.getByLabelText('Name (slug)'), { target: { value: 'claude-team' } });
    await fireEvent.submit(screen.getByTestId('connection-form'));
    expect(onsubmit).toHaveBeenCalledWith(
      expect.objectContaining({ slug: 'claude-team', protocol: 'anthropic', baseUrl: 'https://api.anthropic.com', models: 'claude-sonnet-4-5, claude-haiku-4-5, claude-opus-4-1' }),
      '',
    );
  });

  it('offers no preset picker when editing', () => {
    render(ConnectionForm, { mode: 'edit', initial: emptyConnectionForm(), onsubmit: async () => null, oncancel: () => {} });
    expect(screen.queryByLabelText(/^Provider/)).toBeNull();
  });
});
