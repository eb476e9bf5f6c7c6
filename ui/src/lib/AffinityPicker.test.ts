import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import { useFake } from '../test/fake';
import AffinityPicker from './AffinityPicker.svelte';
import { ConnectionStore } from './connectionDetail.svelte';

async function picker() {
  const env = await useFake('two-profiles');
  const store = new ConnectionStore('main');
  await store.refresh();
  render(AffinityPicker, { store });
  return { ...env, store };
}

const windowInput = () => screen.getByLabelText('Affinity window in minutes') as HTMLInputElement;

describe('AffinityPicker', () => {
  it('explains affinity and shows the current setting', async () => {
    await picker();
    expect(screen.getByTestId('affinity').textContent).toContain('keeps a conversation on one key while its prompt cache is warm');
    expect((screen.getByLabelText(/Per conversation/) as HTMLInputElement).checked).toBe(true);
    expect(windowInput().value).toBe('10');
  });

  it("shows the engine's error for a window out of range and saves a good one", async () => {
    const { store, log } = await picker();
    await fireEvent.input(windowInput(), { target: { value: '2000' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Save affinity' }));
    const error = await screen.findByTestId('affinity-error');
    expect(error.textContent).toBe('window_min: must be between 1 and 1440 minutes (got 2000)');
    expect(error.dataset.code).toBe('invalid');
    expect(store.status?.affinity.window_min, 'nothing changed').toBe(10);

    await fireEvent.input(windowInput(), { target: { value: '30' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Save affinity' }));
    await screen.findByTestId('affinity-saved');
    expect(store.status?.affinity).toEqual({ mode: 'conversation', window_min: 30 });
    expect(screen.queryByTestId('affinity-error')).toBeNull();
    expect(log.filter((r) => r.name === 'routing_affinity').map((r) => r.args)).toEqual([
      { slug: 'main', mode: 'conversation', windowMin: 2000 },
      { slug: 'main', mode: 'conversation', windowMin: 30 },
    ]);
  });

  it('switches to per turn, keeping the window', async () => {
    const { store } = await picker();
    await fireEvent.click(screen.getByLabelText(/Per turn/));
    expect(windowInput().disabled, 'the window belongs to per-conversation affinity').toBe(true);
    await fireEvent.click(screen.getByRole('button', { name: 'Save affinity' }));
    await screen.findByTestId('affinity-saved');
    expect(store.status?.affinity).toEqual({ mode: 'turn', window_min: 10 });
  });
});
