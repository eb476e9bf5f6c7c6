// Presentation helpers: turn engine values into short words for the window.
import type { ConnectionView, GateView, HealthView, ProfileView, RoutingStatus } from './types';

/** The badge text of a connection's routing: `legacy`, `balanced`, `priority` or `suspended`. */
export function routingBadge(c: Pick<ConnectionView, 'routing_mode' | 'routing_state'>): string {
  if (c.routing_mode !== 'legacy' && c.routing_state === 'suspended') return 'suspended';
  return c.routing_mode;
}

/** One line describing a profile's credential for people, never its value. */
export function credentialText(p: Pick<ProfileView, 'credential'>): string {
  switch (p.credential) {
    case 'present':
      return 'in keychain';
    case 'missing':
      return 'missing';
    default:
      return 'keychain locked';
  }
}

/** Share of traffic a weight asks for among the enabled profiles, in whole percent. */
export function weightShare(profile: Pick<ProfileView, 'enabled' | 'weight'>, all: Pick<ProfileView, 'enabled' | 'weight'>[]): number {
  if (!profile.enabled) return 0;
  const total = all.filter((p) => p.enabled).reduce((sum, p) => sum + p.weight, 0);
  return total === 0 ? 0 : Math.round((profile.weight * 100) / total);
}

const FAILURE_KINDS: Record<string, string> = {
  rate_limited: 'rate limited by the provider',
  quota_exhausted: 'quota or credit used up',
  auth_invalid: 'the provider refused the key',
  model_forbidden: 'this key may not use the model',
  permission_ambiguous: 'permission refused (unclear why)',
  overloaded: 'the provider is overloaded',
  server_error: 'the provider had a server error',
  network: 'could not reach the provider',
  bad_request: 'the provider rejected the request',
  unknown: 'unexpected answer from the provider',
};

/** A failure kind in plain words. */
export function failureKindText(kind: string | null | undefined): string {
  if (!kind) return '';
  return FAILURE_KINDS[kind] ?? kind.replaceAll('_', ' ');
}

const EXCLUSIONS: Record<string, string> = {
  disabled: 'disabled',
  secret_missing: 'no key in the keychain',
  missing: 'not signed in',
  expired: 'its token has expired',
  no_evidence: 'not verified yet',
  stale_evidence: 'verification is stale',
  auth_invalid: 'the provider refused the key',
  model_unsupported: 'the key cannot use this model',
  circuit_open: 'cooling down after failures',
  model_circuit_open: 'cooling down for this model',
  probe_in_flight: 'a recovery probe is running',
  quota_reserve: 'its quota is spent or under the reserve until the window resets',
};

/** Why a profile cannot serve a model, in plain words. */
export function exclusionText(reason: string): string {
  return EXCLUSIONS[reason] ?? reason.replaceAll('_', ' ');
}

/** Why activation is not possible now, or `null` when the gates pass. */
export function activationBlocker(gates: GateView): string | null {
  if (gates.ok) return null;
  if (gates.failures.length > 0) return gates.failures[0];
  return 'the activation gates do not hold';
}

/** Readiness of a connection for balanced or priority routing, in one line. */
export function readinessText(status: RoutingStatus | undefined): string {
  if (!status) return 'checking readiness…';
  const verified = status.profiles.filter((p) => p.evidence === 'current').length;
  const total = status.profiles.length;
  if (total === 0) return 'no profiles yet';
  const count = `${verified} of ${total} profile${total === 1 ? '' : 's'} verified`;
  return status.gates.ok ? `ready to route · ${count}` : `not ready · ${count}`;
}

/** m:ss (or h:mm:ss, or `2 d 4:00:09` from a day on) left until `untilIso`; `0:00` once passed. */
export function countdownText(untilIso: string, nowMs: number): string {
  const left = Math.max(0, Math.ceil((Date.parse(untilIso) - nowMs) / 1000));
  const d = Math.floor(left / 86_400);
  const h = Math.floor((left % 86_400) / 3600);
  const m = Math.floor((left % 3600) / 60);
  const s = String(left % 60).padStart(2, '0');
  const clock = h > 0 || d > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
  return d > 0 ? `${d} d ${clock}` : clock;
}

/** "just now", "5 min ago", "3 h ago", "2 days ago". */
export function timeAgo(iso: string, nowMs: number): string {
  const secs = Math.max(0, Math.round((nowMs - Date.parse(iso)) / 1000));
  if (secs < 45) return 'just now';
  const mins = Math.round(secs / 60);
  if (mins < 60) return `${mins} min ago`;
  const hours = Math.round(mins / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.round(hours / 24)} days ago`;
}

/** The state of one circuit in words, without the countdown (shown live beside it). */
export function healthText(h: HealthView): string {
  switch (h.state) {
    case 'closed':
      return 'healthy';
    case 'half_open':
      return 'probing';
    default:
      return h.until ? 'cooling down' : 'open until re-verified';
  }
}

/** Which scope a circuit covers. */
export function healthScope(h: HealthView): string {
  return h.model ?? 'all models';
}

const SECRET_NAME = /(auth|token|secret|key|passw|cookie|session|signature|credential)/i;
const SECRET_VALUE = /^(sk-|sk_|bearer |basic )/i;

/** Whether a header value should be masked on screen. */
export function looksSecret(name: string, value: string): boolean {
  if (SECRET_NAME.test(name) || SECRET_VALUE.test(value)) return true;
  return value.length >= 24 && !/\s/.test(value) && /[a-z]/i.test(value) && /\d/.test(value);
}

/** A header value as shown in lists: masked when it looks secret. */
export function headerDisplay(name: string, value: string): string {
  return looksSecret(name, value) ? '••••••••' : value;
}
