import { describe, expect, it } from 'vitest';
import type { ProfileView } from '../bindings';
import { credentialText, routingBadge, weightShare } from './format';

function profile(over: Partial<ProfileView>): ProfileView {
  return {
    id: 'p_1', connection_id: 'c_1', label: 'a', weight: 1, priority: 0, enabled: true, primary: false,
    credential: 'present', credential_revision: 1, revision: 1, created_at: '', updated_at: '', ...over,
  };
}

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
