import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import CredentialForm from './CredentialForm.svelte';
import ProfileForm from './ProfileForm.svelte';

describe('ProfileForm', () => {
  it('takes the key in a password field, trims a paste, and clears it after submit', async () => {
    const onsubmit = vi.fn(async () => null);
    render(ProfileForm, { onsubmit, oncancel: () => {} });
    const key = screen.getByLabelText(/^API key/) as HTMLInputElement;
    expect(key.type).toBe('password');
    expect(key.autocomplete).toBe('off');
    await fireEvent.input(screen.getByLabelText(/^Label/), { target: { value: ' team-b ' } });
    await fireEvent.input(screen.getByLabelText(/^Weight/), { target: { value: '3' } });
    await fireEvent.input(key, { target: { value: '  sk-pasted-key\n' } });
    await fireEvent.submit(screen.getByTestId('profile-form'));
    expect(onsubmit).toHaveBeenCalledWith({ label: 'team-b', weight: 3, priority: null }, 'sk-pasted-key', null);
    expect(key.value, 'the key is not kept in the form').toBe('');
  });

  it('asks for a key instead of submitting an empty one', async () => {
    const onsubmit = vi.fn(async () => null);
    render(ProfileForm, { onsubmit, oncancel: () => {} });
    await fireEvent.input(screen.getByLabelText(/^Label/), { target: { value: 'x' } });
    await fireEvent.submit(screen.getByTestId('profile-form'));
    expect(onsubmit).not.toHaveBeenCalled();
    expect(screen.getByRole('alert').textContent).toContain('Paste the API key');
  });

  it('shows the engine error by code', async () => {
    render(ProfileForm, {
      onsubmit: async () => ({ code: 'conflict', title: 'The data changed elsewhere; reload and retry.', message: "label 'x' already exists", gates: null }),
      oncancel: () => {},
    });
    await fireEvent.input(screen.getByLabelText(/^API key/), { target: { value: 'sk' } });
    await fireEvent.submit(screen.getByTestId('profile-form'));
    expect((await screen.findByTestId('error')).dataset.code).toBe('conflict');
  });
});

describe('CredentialForm', () => {
  it('never shows the old key and clears the new one after submit', async () => {
    const onsubmit = vi.fn(async () => null);
    render(CredentialForm, { label: 'backup', onsubmit, oncancel: () => {} });
    const key = screen.getByLabelText('New API key') as HTMLInputElement;
    expect(key.type).toBe('password');
    expect(key.value).toBe('');
    await fireEvent.input(key, { target: { value: 'sk-rotated ' } });
    await fireEvent.submit(screen.getByTestId('credential-form'));
    expect(onsubmit).toHaveBeenCalledWith('sk-rotated');
    expect(key.value).toBe('');
    expect(screen.getByTestId('credential-form').textContent).toContain('stale immediately');
  });
});
