import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import ConfirmDialog from './ConfirmDialog.svelte';
import ErrorBanner from './ErrorBanner.svelte';

describe('ConfirmDialog', () => {
  it('names everything it deletes, closes on Escape, and shows a refusal', async () => {
    const oncancel = vi.fn();
    render(ConfirmDialog, {
      title: 'Remove connection main?',
      items: ['connection "main"', '2 profiles: primary, backup', '2 keys in the OS keychain'],
      confirmLabel: 'Remove connection',
      oncancel,
      onconfirm: async () => ({ code: 'not_found', title: 'It no longer exists.', message: "connection 'main' not found", gates: null }),
    });
    const dialog = screen.getByRole('dialog', { name: 'Remove connection main?' });
    expect(screen.getByTestId('deletes').textContent).toContain('primary, backup');
    expect(document.activeElement, 'focus moves into the dialog').toBe(screen.getByRole('button', { name: 'Cancel' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Remove connection' }));
    expect((await screen.findByTestId('error')).dataset.code).toBe('not_found');
    await fireEvent.keyDown(dialog, { key: 'Escape' });
    expect(oncancel).toHaveBeenCalled();
  });
});

describe('ErrorBanner', () => {
  it('offers reload and retry for a conflict only', async () => {
    const retry = vi.fn(async () => {});
    const { rerender } = render(ErrorBanner, { failure: { code: 'conflict', title: 'changed', message: 'm', gates: null, retry } });
    await fireEvent.click(screen.getByRole('button', { name: 'Reload and retry' }));
    expect(retry).toHaveBeenCalledOnce();
    await rerender({ failure: { code: 'invalid', title: 'bad', message: 'm', gates: null, retry } });
    expect(screen.queryByRole('button', { name: 'Reload and retry' })).toBeNull();
    expect(screen.getByRole('alert').dataset.code).toBe('invalid');
  });
});
