import { describe, expect, it } from 'vitest';
import { activityEvents, fetchLimit, latencyText, reasonText, rowKey, sessionTag, sessionTurns, tokensText, turnShares } from './activity';
import type { AttemptView } from './types';

let seq = 0;
function row(over: Partial<AttemptView>): AttemptView {
  seq += 1;
  return {
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(), turn: `t${seq}`, attempt: 1, profile: 'p_a', reason: 'swrr',
    model: 'm1', status: 200, failure_kind: null, scope: null, ttfb_ms: 50, duration_ms: 90, input_tokens: 3, output_tokens: 7, session: null,
    conversation: null, moved: null, cache_read_tokens: null, cache_write_tokens: null, prompt_tokens: 3, connection: 'main', tags: {}, ...over,
  };
}
const profiles = [
  { id: 'p_a', label: 'primary', weight: 1, enabled: true },
  { id: 'p_b', label: 'backup', weight: 3, enabled: true },
];
const newestFirst = (rows: AttemptView[]) => [...rows].reverse();

describe('turnShares', () => {
  it('counts each turn once, for the profile that served it, against the weight share', () => {
    const rows = newestFirst([
      row({ profile: 'p_b' }), row({ profile: 'p_a' }), row({ profile: 'p_b' }), row({ profile: 'p_b' }),
      row({ turn: 'tx', profile: 'p_b', status: 429, failure_kind: 'rate_limited' }),
      row({ turn: 'tx', attempt: 2, profile: 'p_a', reason: 'failover:rate_limited' }),
    ]);
    const r = turnShares(rows, profiles, 50);
    expect(r.turns, 'the failover turn counts once').toBe(5);
    const [a, b] = r.shares;
    expect(a.turns, 'the failover turn counts for the profile that served it').toBe(2);
    expect(b.turns).toBe(3);
    expect(a.expected).toBeCloseTo(0.25);
    expect(b.expected).toBeCloseTo(0.75);
    expect(b.share).toBeCloseTo(0.6);
  });

  it('looks only at the newest N turns and lists unknown profiles by id', () => {
    const rows = newestFirst([row({ profile: 'p_gone' }), row({ profile: 'p_a' }), row({ profile: 'p_a' })]);
    const r = turnShares(rows, profiles, 2);
    expect(r.turns).toBe(2);
    expect(r.shares.find((s) => s.id === 'p_gone'), 'the oldest turn is outside the window').toBeUndefined();
    const all = turnShares(rows, profiles, 10);
    expect(all.shares.find((s) => s.id === 'p_gone')?.label).toBe('p_gone');
  });

  it('gives disabled profiles no expected share', () => {
    const r = turnShares([], [{ ...profiles[0], enabled: false }, profiles[1]], 10);
    expect(r.shares.map((s) => s.expected)).toEqual([0, 1]);
    expect(r.shares.every((s) => s.share === 0)).toBe(true);
  });
});

describe('activityEvents', () => {
  const labelOf = (id: string) => ({ p_a: 'primary', p_b: 'backup' })[id] ?? id;

  it('names the failover, the profile it left and why; restores and failed probes', () => {
    const rows = newestFirst([
      row({ turn: 'f', profile: 'p_b', status: 429, failure_kind: 'rate_limited' }),
      row({ turn: 'f', attempt: 2, profile: 'p_a', reason: 'failover:rate_limited' }),
      row({ profile: 'p_b', reason: 'probe', status: 429, failure_kind: 'rate_limited' }),
      row({ profile: 'p_b', reason: 'probe' }),
      row({ profile: 'p_a' }),
    ]);
    const events = activityEvents(rows, labelOf);
    expect(events.map((e) => e.kind)).toEqual(['restore', 'probe_failed', 'failover']);
    expect(events[2].text).toBe('Failover to primary after backup: rate limited by the provider');
    expect(events[1].text).toContain('backup still failing');
    expect(events[0].text).toBe('backup restored: the recovery probe succeeded');
    expect(events[0].key).toBe(rowKey(rows[1]));
  });
});

describe('cells', () => {
  it('reads reasons, latency and tokens in short words', () => {
    expect(reasonText('failover:auth_invalid')).toBe('failover (auth invalid)');
    expect(reasonText('swrr')).toBe('balanced');
    expect(reasonText('legacy_primary')).toBe('legacy (primary)');
    expect(latencyText({ ttfb_ms: 12, duration_ms: 40 })).toBe('ttfb 12 ms · 40 ms');
    expect(latencyText({ ttfb_ms: null, duration_ms: null })).toBe('—');
    expect(tokensText({ input_tokens: 5, output_tokens: null })).toBe('5 in · 0 out');
    expect(tokensText({ input_tokens: null, output_tokens: null })).toBe('—');
    expect(fetchLimit(20)).toBe(200);
    expect(fetchLimit(200)).toBe(800);
  });
});

describe('sessions', () => {
  it('tags a session by its hash and counts its turns', () => {
    const rows = [
      row({ session: 'abcdef0123', turn: 't1' }),
      row({ session: 'abcdef0123', turn: 't1', attempt: 2 }),
      row({ session: 'abcdef0123', turn: 't2' }),
      row({ session: '9999990000', turn: 't3' }),
      row({ session: null, turn: 't4' }),
    ];
    expect(sessionTag('abcdef0123')).toBe('abcdef');
    expect(sessionTag(null)).toBe('—');
    const turns = sessionTurns(rows);
    expect(turns.get('abcdef0123')).toBe(2); // two turns, one of them with a failover attempt
    expect(turns.get('9999990000')).toBe(1);
    expect(turns.size).toBe(2); // rows without a session are not a session
  });
});
