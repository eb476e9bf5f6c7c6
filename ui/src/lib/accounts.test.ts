import { describe, expect, it } from 'vitest';
import { profile } from '../test/fixtures';
import { clientForProtocol, expiryFromDate, healthWords, kindText, needsAttention, signsIn } from './accounts';

describe('profile kinds in words', () => {
  it('names the kind with its official client', () => {
    expect(kindText({ kind: 'api_key', client: null })).toBe('API key');
    expect(kindText({ kind: 'token', client: 'claude-code' })).toBe('token · Claude Code');
    expect(kindText({ kind: 'external', client: 'codex' })).toBe('sign-in · Codex');
    expect([clientForProtocol('anthropic'), clientForProtocol('openai')]).toEqual(['claude-code', 'codex']);
    expect([signsIn('api_key'), signsIn('token'), signsIn('external')]).toEqual([false, true, true]);
  });
});

describe('credential health in words', () => {
  const h = (state: 'static' | 'ok' | 'expiring' | 'expired' | 'missing', expires_at: string | null = null) => ({
    state,
    reason: null,
    expires_at,
  });

  it('keeps an API key to where it is', () => {
    expect(healthWords(profile())).toEqual({ tone: 'ok', text: 'in keychain' });
    expect(healthWords(profile({ credential: 'missing', credential_health: h('missing') }))).toEqual({ tone: 'bad', text: 'missing' });
    expect(healthWords(profile({ credential: 'unknown' })).text).toBe('keychain locked');
  });

  it('gives a token its day and a sign-in whether it is signed in', () => {
    const token = (state: Parameters<typeof h>[0], at: string | null) => profile({ kind: 'token', client: 'claude-code', credential_health: h(state, at) });
    expect(healthWords(token('ok', '2027-03-01T10:00:00.000Z'))).toEqual({ tone: 'ok', text: 'ok until 2027-03-01' });
    expect(healthWords(token('ok', null))).toEqual({ tone: 'ok', text: 'ok' });
    expect(healthWords(token('expiring', '2027-01-05T10:00:00.000Z'))).toEqual({ tone: 'warn', text: 'expires 2027-01-05' });
    expect(healthWords(token('expired', '2027-01-01T00:00:00.000Z'))).toEqual({ tone: 'bad', text: 'expired 2027-01-01' });
    expect(healthWords(profile({ kind: 'token', credential: 'missing', credential_health: h('missing') })).text).toBe('no token');
    const external = (state: Parameters<typeof h>[0]) => profile({ kind: 'external', client: 'codex', credential_health: h(state) });
    expect(healthWords(external('ok'))).toEqual({ tone: 'ok', text: 'signed in' });
    expect(healthWords(external('missing'))).toEqual({ tone: 'bad', text: 'not signed in' });
    expect(['static', 'ok', 'expiring', 'expired', 'missing'].map((s) => needsAttention(s as 'ok'))).toEqual([false, false, true, true, true]);
  });
});

describe('expiry from a date field', () => {
  it('is the end of that day in the local time zone, as UTC', () => {
    const iso = expiryFromDate('2027-01-05');
    expect(iso).toBe(new Date(2027, 0, 5, 23, 59, 59).toISOString());
    expect(expiryFromDate('  ')).toBeNull();
    expect(expiryFromDate('2027-02-30'), 'no such day').toBeUndefined();
    expect(expiryFromDate('tomorrow')).toBeUndefined();
  });
});
