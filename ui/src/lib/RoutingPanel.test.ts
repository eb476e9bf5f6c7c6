import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import { useFake } from '../test/fake';
import { ConnectionStore } from './connectionDetail.svelte';
import RoutingPanel from './RoutingPanel.svelte';
import SuspendedNotice from './SuspendedNotice.svelte';

async function panel() {
  const env = await useFake('two-profiles');
  const store = new ConnectionStore('main');
  await store.refresh();
  render(RoutingPanel, { store });
  return { ...env, store };
}

describe('RoutingPanel', () => {
  it('keeps Activate disabled and says why while the gates fail', async () => {
    await panel();
    const activate = screen.getByRole('button', { name: 'Activate balanced' }) as HTMLButtonElement;
    expect(activate.disabled).toBe(true);
    expect(screen.getByTestId('activate-why').textContent).toContain('Activation is not possible: model gpt-a has no eligible profile');
  });

  it('enables Activate once verification passes the gates, activates the chosen mode, and deactivates', async () => {
    const { store } = await panel();
    await store.verify(null, false);
    const activate = (await screen.findByRole('button', { name: 'Activate balanced' })) as HTMLButtonElement;
    expect(activate.disabled).toBe(false);
    await fireEvent.click(screen.getByLabelText(/Priority/));
    await fireEvent.click(screen.getByRole('button', { name: 'Activate priority' }));
    await vi_wait(() => store.status?.mode === 'priority');
    expect(screen.getByTestId('routing-current').textContent).toContain('priority (active)');
    await fireEvent.click(screen.getByRole('button', { name: 'Deactivate (back to legacy)' }));
    await vi_wait(() => store.status?.mode === 'legacy');
  });
});

describe('SuspendedNotice', () => {
  it('explains a suspension and offers verification as the fix', async () => {
    const { store } = await panel();
    await store.verify(null, false);
    await store.activate('balanced');
    await store.rotate(store.profiles[1].id, 'sk-new');
    let verified = false;
    render(SuspendedNotice, { status: store.status!, running: false, onverify: () => (verified = true) });
    const notice = screen.getByTestId('suspended');
    expect(notice.textContent).toContain('balanced routing is suspended');
    expect(notice.textContent).toContain('use only the primary key (legacy)');
    await fireEvent.click(screen.getByRole('button', { name: 'Verify all now' }));
    expect(verified).toBe(true);
  });
});

async function vi_wait(cond: () => boolean) {
  for (let i = 0; i < 50 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(cond()).toBe(true);
}
