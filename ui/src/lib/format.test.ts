import { describe, expect, it } from 'vitest';
import { failingGates, profile } from '../test/fixtures';
import {
  activationBlocker,
  countdownText,
  credentialText,
  exclusionText,
  failureKindText,
  headerDisplay,
  healthText,
  looksSecret,
  readinessText,
  routingBadge,
  timeAgo,
  weightShare,
} from './format';
import type { RoutingStatus } from './types';

describe('routingBadge', () => {
  it('shows suspended only for an activated mode that is suspended', () => {
    expect(routingBadge({ routing_mode: 'balanced', routing_state: 'suspended' })).toBe('suspended');
    expect(routingBadge({ routing_mode: 'legacy', routing_state: 'suspended' })).toBe('legacy');
    expect(routingBadge({ routing_mode: 'priority', routing_state: 'active' })).toBe('priority');
  });
});

describe('weightShare', () => {
  it('splits by weight among enabled profiles only', () => {
    const all = [profile({ id: 'a', weight: 5 }), profile({ id: 'b', weight: 3 }), profile({ id: 'c', weight: 2 }), profile({ id: 'd', weight: 9, enabled: false })];
    expect(all.map((p) => weightShare(p, all))).toEqual([50, 30, 20, 0]);
  });
});

describe('credentialText', () => {
  it('never shows a value, only where the secret is', () => {
    expect(credentialText({ credential: 'present' })).toBe('in keychain');
    expect(credentialText({ credential: 'missing' })).toBe('missing');
    expect(credentialText({ credential: 'unknown' })).toBe('keychain locked');
  });
});

describe('plain words', () => {
  it('names every failure kind of the taxonomy', () => {
    for (const k of ['rate_limited', 'quota_exhausted', 'auth_invalid', 'model_forbidden', 'permission_ambiguous', 'overloaded', 'server_error', 'network', 'bad_request', 'unknown']) {
      expect(failureKindText(k), k).not.toContain('_');
    }
    expect(failureKindText('auth_invalid')).toBe('the provider refused the key');
    expect(failureKindText('brand_new_kind')).toBe('brand new kind');
    expect(failureKindText(null)).toBe('');
  });

  it('names every exclusion reason', () => {
    expect(exclusionText('stale_evidence')).toBe('verification is stale');
    expect(exclusionText('no_evidence')).toBe('not verified yet');
    expect(exclusionText('quota_reserve')).toContain('quota');
    expect(exclusionText('something_else')).toBe('something else');
  });
});

describe('activation', () => {
  it('says why activation is blocked, or nothing when the gates pass', () => {
    expect(activationBlocker(failingGates)).toContain('gpt-b has no eligible profile');
    expect(activationBlocker({ ok: true, models: [], failures: [] })).toBeNull();
  });

  it('sums readiness in one line', () => {
    const status = { gates: { ok: false }, profiles: [{ evidence: 'current' }, { evidence: 'stale' }] } as unknown as RoutingStatus;
    expect(readinessText(status)).toBe('not ready · 1 of 2 profiles verified');
    expect(readinessText(undefined)).toBe('checking readiness…');
  });
});

describe('time', () => {
  it('counts down in m:ss and h:mm:ss, never below zero', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(countdownText('2026-01-01T00:01:05Z', now)).toBe('1:05');
    expect(countdownText('2026-01-01T02:00:09Z', now)).toBe('2:00:09');
    expect(countdownText('2025-12-31T23:59:00Z', now)).toBe('0:00');
    expect(countdownText('2026-01-03T04:00:09Z', now), 'a weekly window counts days').toBe('2 d 4:00:09');
    expect(countdownText('2026-01-02T00:00:05Z', now)).toBe('1 d 0:00:05');
  });

  it('says how long ago', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    expect(timeAgo('2026-01-01T11:59:50Z', now)).toBe('just now');
    expect(timeAgo('2026-01-01T11:55:00Z', now)).toBe('5 min ago');
    expect(timeAgo('2026-01-01T09:00:00Z', now)).toBe('3 h ago');
    expect(timeAgo('2025-12-28T12:00:00Z', now)).toBe('4 days ago');
  });

  it('describes circuit states', () => {
    expect(healthText({ model: null, state: 'open', kind: 'rate_limited', until: '2026-01-01T00:00:00Z' })).toBe('cooling down');
    expect(healthText({ model: null, state: 'open', kind: 'auth_invalid', until: null })).toBe('open until re-verified');
    expect(healthText({ model: 'm', state: 'half_open', kind: null, until: null })).toBe('probing');
  });
});

describe('header masking', () => {
  it('masks values that look secret', () => {
    expect(looksSecret('X-Session-Token', 'abc')).toBe(true);
    expect(looksSecret('X-Trace', 'sk-abc')).toBe(true);
    expect(looksSecret('X-Trace', 'a1b2c3d4e5f6g7h8i9j0k1l2m3')).toBe(true);
    expect(looksSecret('OpenAI-Organization', 'org-1')).toBe(false);
    expect(looksSecret('anthropic-version', '2023-06-01')).toBe(false);
    expect(headerDisplay('X-Api-Token', 'hunter2')).toBe('••••••••');
    expect(headerDisplay('anthropic-beta', 'tools-2024')).toBe('tools-2024');
  });
});
