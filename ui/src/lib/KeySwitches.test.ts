import { render, screen } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import { readiness } from '../test/fixtures';
import AttemptTable from './AttemptTable.svelte';
import CacheCell from './CacheCell.svelte';
import ShareChart from './ShareChart.svelte';
import { keySwitches, resentText } from './switches';
import { hitRatioText, trafficShares } from './traffic';
import type { AttemptView } from './types';

// Fixtures: one conversation on key p_a for two attempts, then (a balance move) on p_b; a
// second conversation stays on p_b. Newest first, as the ledger lists them.
function attempt(i: number, over: Partial<AttemptView>): AttemptView {
  return {
    at: new Date(Date.UTC(2026, 11, 1, 10, 0, i)).toISOString(), connection: 'main', turn: `t${i}`, attempt: 1,
    profile: 'p_a', reason: 'conversation', model: 'm1', status: 200, failure_kind: null, scope: null, ttfb_ms: 80,
    duration_ms: 120, input_tokens: 50, output_tokens: 10, session: null, conversation: 'a:one', moved: null,
    cache_read_tokens: 9000, cache_write_tokens: 0, prompt_tokens: 9050, tags: {}, ...over,
  };
}
const ROWS: AttemptView[] = [
  attempt(5, { profile: 'p_b', conversation: 'a:two' }),
  attempt(4, { profile: 'p_b', cache_read_tokens: 0, cache_write_tokens: 12_000, input_tokens: 300, prompt_tokens: 12_300, reason: 'swrr', moved: 'balance' }),
  attempt(3, { profile: 'p_b', conversation: 'a:two', reason: 'swrr' }),
  attempt(2, {}),
  attempt(1, { reason: 'swrr' }),
];
const labels: Record<string, string> = { p_a: 'primary', p_b: 'backup' };
const labelOf = (id: string) => labels[id] ?? id;

describe('key switches', () => {
  it('marks only the attempt that moved its conversation, with what it re-sent uncached', () => {
    const switches = keySwitches(ROWS);
    expect([...switches.values()], 'conversation two never changed key').toEqual([{ from: 'p_a', to: 'p_b', resent: 12_300 }]);
    expect(resentText({ from: 'p_a', to: 'p_b', resent: 12_300 })).toBe('12.3k uncached');
    expect(resentText({ from: 'p_a', to: 'p_b', resent: null }), 'no counts: said so').toBe('uncached: unknown');

    render(AttemptTable, { rows: ROWS, fresh: new Set<string>(), labelOf, switches });
    const marks = screen.getAllByTestId('key-switch');
    expect(marks, 'one switch in the listed attempts').toHaveLength(1);
    expect(marks[0].textContent).toContain('from primary · 12.3k uncached');
    const row = marks[0].closest('tr');
    expect(row?.dataset.reason, 'on the row of the moved turn').toBe('swrr');
    expect(row?.dataset.profile).toBe('p_b');
  });
});

describe('cache and traffic', () => {
  const profiles = [
    readiness({ id: 'p_a', label: 'primary', weight: 2, cache: { read_tokens: 950, input_tokens: 1000, hit_ratio: 0.95 },
      traffic: { conversations: 100, conversation_share: 0.5, prompt_tokens: 6_000, token_share: 0.6 } }),
    readiness({ id: 'p_b', label: 'backup', weight: 2, cache: { read_tokens: 0, input_tokens: 0, hit_ratio: null },
      traffic: { conversations: 100, conversation_share: 0.5, prompt_tokens: 4_000, token_share: 0.4 } }),
  ];

  it('shows the hit ratio, and a dash rather than 0 when nothing was counted', () => {
    expect(hitRatioText(profiles[0].cache)).toBe('cache 95.0 %');
    expect(hitRatioText(profiles[1].cache)).toBe('cache —');
    render(CacheCell, { cache: profiles[0].cache });
    expect(screen.getByTestId('cache-cell').title).toBe('950 of 1000 prompt tokens read from the cache');
  });

  it('charts shares by turns, conversations or tokens from the engine’s traffic', async () => {
    const report = { turns: 4, shares: [
      { id: 'p_a', label: 'primary', weight: 2, turns: 3, share: 0.75, expected: 0.5 },
      { id: 'p_b', label: 'backup', weight: 2, turns: 1, share: 0.25, expected: 0.5 },
    ] };
    expect(trafficShares(profiles, 'tokens').shares.map((s) => s.share)).toEqual([0.6, 0.4]);
    render(ShareChart, { report, traffic: profiles });
    const shares = () => screen.getAllByTestId('share-row').map((r) => r.dataset.share);
    expect(shares(), 'turns by default').toEqual(['0.750', '0.250']);
    await screen.getByTestId('share-basis-conversations').click();
    expect(screen.getByTestId('share-chart').dataset.basis).toBe('conversations');
    expect(shares(), 'conversations: exactly the weights').toEqual(['0.500', '0.500']);
    expect(screen.getByTestId('share-chart').textContent).toContain('50% (100 conversations) · weight 2 → 50%');
    await screen.getByTestId('share-basis-tokens').click();
    expect(shares(), 'tokens: the engine’s token shares').toEqual(['0.600', '0.400']);
    expect(screen.getByTestId('share-chart').textContent).toContain('60% (6.0k tokens)');
  });

  it('offers no toggle without the engine’s traffic', () => {
    render(ShareChart, { report: { turns: 0, shares: [] } });
    expect(screen.queryByTestId('share-basis-tokens')).toBeNull();
    expect(screen.getByTestId('share-chart').dataset.basis).toBe('turns');
  });
});
