// Issue 17: "Start with the system" is off by default, turns on and off through the engine,
// shows the entry the app wrote, and shows a refusal (unsupported platform) by code.
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import { useFake } from '../test/fake';
import { FAKE_ENTRY } from '../../e2e/fake/autostart';
import AutostartToggle from './AutostartToggle.svelte';
import { AutostartStore } from './autostart.svelte';

describe('AutostartToggle', () => {
  it('is off by default, then turns on (showing the entry) and off again', async () => {
    const { fake, log } = await useFake('empty');
    const store = new AutostartStore();
    render(AutostartToggle, { store });
    const box = (await screen.findByRole('checkbox', { name: /Start Switchyard with the system/ })) as HTMLInputElement;
    await waitFor(() => expect(box.disabled).toBe(false));
    expect(box.checked, 'off by default').toBe(false);
    expect(screen.queryByTestId('autostart-entry')).toBeNull();
    await fireEvent.click(box);
    await waitFor(() => expect(screen.getByTestId('autostart-entry').textContent).toContain(FAKE_ENTRY));
    expect(fake.autostart.enabled).toBe(true);
    await fireEvent.click(box);
    await waitFor(() => expect(screen.queryByTestId('autostart-entry')).toBeNull());
    expect(log.filter((r) => r.name === 'autostart_set').map((r) => r.args)).toEqual([{ enabled: true }, { enabled: false }]);
  });

  it('shows a refusal by its code and stays off', async () => {
    const { fake } = await useFake('empty');
    fake.autostart.unsupported = true;
    const store = new AutostartStore();
    await store.refresh();
    await store.set(true);
    expect(store.error?.code).toBe('precondition');
    expect(store.view?.enabled).toBe(false);
  });
});
