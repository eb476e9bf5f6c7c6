import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import FallbackChain from './FallbackChain.svelte';
import { addHop, chainState, hopText, moveHop, type FallbackStatus } from './fallback';

const noGates = { ok: true, models: [], failures: [] };

function status(over: Partial<FallbackStatus> = {}): FallbackStatus {
  return { chain: [], active: false, activated: false, activated_at: null, pending: false, note: null, gates: noGates, ...over };
}

function mount(s: FallbackStatus, candidates = ['b', 'c']) {
  const onSave = vi.fn(async (_hops: string[]) => ({ ok: true as const }));
  const onActivate = vi.fn(async () => ({ ok: true as const }));
  const onDeactivate = vi.fn(async () => ({ ok: true as const }));
  render(FallbackChain, { status: s, candidates, onSave, onActivate, onDeactivate });
  return { onSave, onActivate, onDeactivate };
}

const hops = () => screen.queryAllByTestId('fallback-hop').map((li) => li.dataset.slug);

describe('fallback chain helpers', () => {
  it('writes hops as the CLI takes them, reorders and adds without repeats', () => {
    expect(hopText({ slug: 'b', model: null })).toBe('b');
    expect(hopText({ slug: 'b', model: 'm1' })).toBe('b=m1');
    const chain = [{ slug: 'b', model: null }, { slug: 'c', model: null }];
    expect(moveHop(chain, 1, -1).map((h) => h.slug)).toEqual(['c', 'b']);
    expect(moveHop(chain, 0, -1), 'out of range changes nothing').toBe(chain);
    expect(addHop(chain, 'b'), 'no repeat').toBe(chain);
    expect(chainState(status({ chain, activated: true })), 'activated but its gates fail').toBe('suspended');
    expect(chainState(status({ chain, pending: true }))).toBe('pending');
  });
});

describe('FallbackChain', () => {
  it('builds an ordered chain with a hop model and saves it as OTHER[=MODEL]', async () => {
    const { onSave } = mount(status());
    expect(screen.getByTestId('fallback-empty')).toBeTruthy();
    const select = screen.getByLabelText('Connection to add') as HTMLSelectElement;
    await fireEvent.change(select, { target: { value: 'b' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Add' }));
    await fireEvent.change(select, { target: { value: 'c' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Add' }));
    expect(hops()).toEqual(['b', 'c']);
    await fireEvent.click(screen.getByRole('button', { name: 'Move c up' }));
    expect(hops(), 'reordered').toEqual(['c', 'b']);
    await fireEvent.input(screen.getByLabelText('Model for b'), { target: { value: 'm-big' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Save chain' }));
    expect(onSave).toHaveBeenCalledWith(['c', 'b=m-big']);
  });

  it("shows an inactive chain's gate report and the engine's refusal", async () => {
    const gates = { ok: false, models: [], failures: ['hop b: model m1 has no profile with current evidence (b/primary: no_evidence)'] };
    const s = status({ chain: [{ slug: 'b', model: null }], gates });
    const onSave = vi.fn();
    const onActivate = vi.fn(async () => ({
      ok: false as const,
      failure: { code: 'precondition' as const, title: 'A precondition does not hold.', message: "cannot activate the fallback chain of 'a'", gates },
    }));
    render(FallbackChain, { status: s, candidates: ['b'], onSave, onActivate, onDeactivate: vi.fn() });
    expect(screen.getByTestId('fallback-state').textContent).toBe('inactive');
    expect(screen.getByTestId('fallback-gates').textContent).toContain('hop b: model m1');
    await fireEvent.click(screen.getByRole('button', { name: 'Activate' }));
    const error = await screen.findByTestId('fallback-error');
    expect(error.dataset.code).toBe('precondition');
    expect(error.textContent).toContain('no profile with current evidence');
  });

  it('offers deactivation for an active or suspended chain and says why it is suspended', async () => {
    const s = status({ chain: [{ slug: 'b', model: 'm1' }], activated: true, note: 'suspended (no fallback) because …' });
    const { onDeactivate } = mount(s, ['b']);
    expect(screen.getByTestId('fallback-state').textContent).toBe('suspended');
    expect(screen.getByTestId('fallback-note').textContent).toContain('suspended');
    expect((screen.getByLabelText('Model for b') as HTMLInputElement).value).toBe('m1');
    await fireEvent.click(screen.getByRole('button', { name: 'Deactivate' }));
    expect(onDeactivate).toHaveBeenCalledTimes(1);
  });
});
