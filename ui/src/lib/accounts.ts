// Profile kinds and credential health in words (docs/design.md §14): what a profile's
// credential is, whether it is usable now, and what brings it back. The engine computes the
// health; this only names it.
import type { CredentialHealthState, OfficialClient, ProfileKind, ProfileView } from './types';

/** The kinds the window can create (`oauth`: OpenAI connections only). */
export type CreatableKind = 'api_key' | 'token' | 'external' | 'oauth';

const CLIENTS: Record<OfficialClient, string> = { 'claude-code': 'Claude Code', codex: 'Codex' };

/** An official client's name. */
export function clientName(client: OfficialClient | null | undefined): string {
  return client ? CLIENTS[client] : '';
}

/** The official client a subscription credential of a connection of this protocol belongs to. */
export function clientForProtocol(protocol: string | null | undefined): OfficialClient {
  return protocol === 'openai' ? 'codex' : 'claude-code';
}

const KINDS: Record<ProfileKind, string> = { api_key: 'API key', token: 'token', external: 'sign-in', oauth: 'ChatGPT login' };

/** The kind badge: `API key`, `token · Claude Code`, `sign-in · Codex`. */
export function kindText(p: Pick<ProfileView, 'kind' | 'client'>): string {
  const client = clientName(p.client);
  return client && p.kind !== 'api_key' ? `${KINDS[p.kind]} · ${client}` : KINDS[p.kind];
}

/** What the kind is for, as the badge's tooltip. */
export function kindHint(kind: ProfileKind): string {
  switch (kind) {
    case 'api_key':
      return 'a key the provider issued for API use, kept in the OS keychain';
    case 'token':
      return 'a subscription token (claude setup-token) kept in the OS keychain; used only for requests from the official client it was issued for';
    case 'external':
      return "the official CLI's own login in this profile's config directory; Switchyard never reads it";
    default:
      return 'a ChatGPT login Switchyard signed in and renews itself, kept in the OS keychain; serves any client of this connection';
  }
}

export type Tone = 'ok' | 'warn' | 'bad';

export interface HealthWords {
  tone: Tone;
  /** Short words for the cell: `in keychain`, `ok until 2027-01-05`, `expired 2027-01-01`, `not signed in`. */
  text: string;
}

/** The day of an RFC 3339 time (`2027-01-05`). */
export function dayOf(iso: string | null | undefined): string | null {
  return iso ? iso.slice(0, 10) : null;
}

const TONES: Record<CredentialHealthState, Tone> = { static: 'ok', ok: 'ok', expiring: 'warn', expired: 'bad', missing: 'bad' };

/** A profile's credential health in words, by kind. */
export function healthWords(p: Pick<ProfileView, 'kind' | 'credential' | 'credential_health'>): HealthWords {
  const h = p.credential_health;
  const tone = TONES[h.state];
  const day = dayOf(h.expires_at);
  if (p.kind === 'api_key' || p.credential === 'unknown') {
    const text = p.credential === 'present' ? 'in keychain' : p.credential === 'missing' ? 'missing' : 'keychain locked';
    return { tone: p.credential === 'present' ? 'ok' : 'bad', text };
  }
  switch (h.state) {
    case 'expiring':
      return { tone, text: day ? `expires ${day}` : 'expiring' };
    case 'expired':
      return { tone, text: day ? `expired ${day}` : 'expired' };
    case 'missing':
      return { tone, text: p.kind === 'token' ? 'no token' : 'not signed in' };
    default:
      if (p.kind === 'external' || p.kind === 'oauth') return { tone, text: 'signed in' };
      return { tone, text: day ? `ok until ${day}` : 'ok' };
  }
}

/** Whether the profile's credential is renewed by signing in again (a token or a login), not replaced as a key. */
export function signsIn(kind: ProfileKind): boolean {
  return kind !== 'api_key';
}

/** Whether the profile needs the user now: routing leaves it out (`expired`, `missing`) or soon will (`expiring`). */
export function needsAttention(state: CredentialHealthState): boolean {
  return state === 'expiring' || state === 'expired' || state === 'missing';
}

/**
 * A token's expiry from a date field (`YYYY-MM-DD`): the end of that day in the user's time
 * zone, as RFC 3339 UTC. `null` when empty; `undefined` when it is not a date.
 */
export function expiryFromDate(date: string): string | null | undefined {
  const d = date.trim();
  if (d === '') return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(d);
  if (!m) return undefined;
  const [y, mo, day] = [Number(m[1]), Number(m[2]) - 1, Number(m[3])];
  const end = new Date(y, mo, day, 23, 59, 59);
  if (end.getFullYear() !== y || end.getMonth() !== mo || end.getDate() !== day) return undefined;
  return end.toISOString();
}
