import { clearMocks, mockIPC } from '@tauri-apps/api/mocks';
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, describe, expect, it } from 'vitest';
import PoolsPanel from './PoolsPanel.svelte';

afterEach(() => clearMocks());

const member = (slug: string, model: string | null, weight: number, order: number, ready: boolean) => ({
  member: model ? `${slug}=${model}` : slug,
  slug,
  model,
  weight,
  order,
  ready,
  why_out: ready ? null : 'its connection was removed',
});

const pool = {
  name: 'fleet',
  protocol: 'anthropic',
  mode: 'balanced',
  state: 'active',
  members: [member('glm', 'glm-4.6', 3, 0, true), member('kimi', 'kimi-k2', 2, 1, true), member('ds', null, 1, 2, false)],
  last_launched: 'glm=glm-4.6',
  revision: 3,
};

const status = {
  pool,
  gates: { ok: false, counting: 2, failures: ["member 'ds': its connection was removed"] },
  note: null,
  shares: [
    { member: 'glm=glm-4.6', weight_share: 0.5, conversations: 6, conversation_share: 0.6, tokens: 900, token_share: 0.75 },
    { member: 'kimi=kimi-k2', weight_share: 0.333, conversations: 4, conversation_share: 0.4, tokens: 300, token_share: 0.25 },
    { member: 'ds', weight_share: 0.167, conversations: 0, conversation_share: 0, tokens: 0, token_share: 0 },
  ],
};

describe('PoolsPanel', () => {
  it('lists pools and shows members, why one is out, the gates and shares against weights', async () => {
    const calls: string[] = [];
    mockIPC((cmd) => {
      calls.push(cmd);
      if (cmd === 'pool_list') return [pool];
      if (cmd === 'pool_status') return status;
      return null;
    });
    render(PoolsPanel);
    await waitFor(() => expect(screen.getAllByTestId('pool-row')).toHaveLength(1));
    expect(screen.getByTestId('pool-row').dataset.state).toBe('active');
    await fireEvent.click(screen.getByRole('button', { name: 'fleet' }));
    await waitFor(() => expect(screen.getByTestId('pool-detail').dataset.pool).toBe('fleet'));
    const members = screen.getAllByTestId('pool-member');
    expect(members.map((m) => m.dataset.member)).toEqual(['glm=glm-4.6', 'kimi=kimi-k2', 'ds']);
    expect(members[2].textContent, 'a member out says why').toContain('its connection was removed');
    expect(screen.getByTestId('pool-gates').dataset.ok).toBe('false');
    expect(screen.getByRole('button', { name: 'Activate balanced' }).hasAttribute('disabled'), 'gated').toBe(true);
    const shares = screen.getAllByTestId('pool-share');
    expect(shares.map((s) => s.dataset.share)).toEqual(['0.600', '0.400', '0.000']);
    expect(shares[0].dataset.weight).toBe('0.500');
    await fireEvent.click(screen.getByRole('button', { name: 'tokens' }));
    expect(screen.getAllByTestId('pool-share').map((s) => s.dataset.share)).toEqual(['0.750', '0.250', '0.000']);
    expect(calls).toContain('pool_status');
  });

  it('edits the members in order against the revision shown, and shows a conflict without losing the edit', async () => {
    const edits: unknown[] = [];
    const calls: string[] = [];
    let conflict = false;
    mockIPC((cmd, args) => {
      calls.push(cmd);
      if (cmd === 'pool_list') return [pool];
      if (cmd === 'pool_status') return status;
      if (cmd === 'pool_edit') {
        edits.push(args);
        if (conflict) throw { code: 'conflict', message: "pool 'fleet' changed since it was read", gates: null };
        return status;
      }
      return null;
    });
    render(PoolsPanel);
    await waitFor(() => expect(screen.getAllByTestId('pool-row')).toHaveLength(1));
    await fireEvent.click(screen.getByRole('button', { name: 'fleet' }));
    await waitFor(() => expect(screen.getByTestId('pool-detail').dataset.pool).toBe('fleet'));
    await fireEvent.click(screen.getByRole('button', { name: 'Edit members' }));
    const text = screen.getByTestId('pool-edit').querySelector('textarea') as HTMLTextAreaElement;
    expect(text.value, 'prefilled with each member and its weight, in order').toBe('glm=glm-4.6:3\nkimi=kimi-k2:2\nds:1');
    await fireEvent.input(text, { target: { value: 'kimi=kimi-k2:4\nglm=glm-4.6:1' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Save members' }));
    await waitFor(() => expect(edits).toHaveLength(1));
    expect(edits[0], 'the new order and weights, against revision 3').toEqual({
      pool: 'fleet',
      members: ['kimi=kimi-k2:4', 'glm=glm-4.6:1'],
      ifRevision: 3,
    });
    await waitFor(() => expect(screen.queryByTestId('pool-edit'), 'closed after a save').toBeNull());

    conflict = true;
    await fireEvent.click(screen.getByRole('button', { name: 'Edit members' }));
    const again = screen.getByTestId('pool-edit').querySelector('textarea') as HTMLTextAreaElement;
    await fireEvent.input(again, { target: { value: 'glm=glm-4.6:9' } });
    const before = calls.length;
    await fireEvent.click(screen.getByRole('button', { name: 'Save members' }));
    // Settled: the refused edit, then the reload of the list and of the pool shown.
    await waitFor(() => expect(calls.slice(before)).toEqual(['pool_edit', 'pool_list', 'pool_status']));
    await new Promise((r) => setTimeout(r, 20));
    expect(screen.getByTestId('pool-error').textContent, 'the refusal stays shown after the reload').toContain(
      'changed since it was read',
    );
    const kept = screen.getByTestId('pool-edit').querySelector('textarea') as HTMLTextAreaElement;
    expect(kept.value, 'a refused edit stays in the form').toBe('glm=glm-4.6:9');
  });
});
