// The fake engine's readiness rules, a small copy of the real ones: evidence is current when
// taken under the profile's credential revision and the connection's basis; a profile serves a
// model when enabled, keyed, current and the model is supported; the gates need every model
// served and one model served twice. What a failing gate says comes from the engine itself
// (GATE_SENTENCES in the bindings), not a copy.
import { GATE_SENTENCES } from '../../src/bindings';
import type {
  AffinityView,
  CredentialHealthView,
  OfficialClient,
  ProfileKind,
  ExcludedView,
  GateView,
  HealthView,
  ModelGateView,
  ModelProof,
  ProfileReadiness,
  ProfileView,
  RoutingMode,
  RoutingState,
  RoutingStatus,
} from '../../src/lib/types';

export interface FakeEvidence {
  credentialRevision: number;
  basis: number;
  at: string;
  outcome: 'ok' | 'auth_invalid';
  models: ModelProof[];
}

export interface FakeProfile {
  id: string;
  connectionId: string;
  label: string;
  weight: number;
  priority: number;
  enabled: boolean;
  primary: boolean;
  hasSecret: boolean;
  credentialRevision: number;
  revision: number;
  createdAt: string;
  updatedAt: string;
  evidence: FakeEvidence | null;
  health: HealthView[];
  /** What the credential is (absent: an API key). */
  kind?: ProfileKind;
  client?: OfficialClient | null;
  /** A token's expiry, epoch ms. */
  expiresAt?: number | null;
  /** An external profile: the official CLI's credential file is there. */
  signedIn?: boolean;
}

export interface FakeConnection {
  id: string;
  slug: string;
  protocol: string;
  baseUrl: string;
  headers: { name: string; value: string }[];
  models: string[];
  mapping: { from: string; to: string }[];
  basis: number;
  revision: number;
  mode: RoutingMode;
  state: RoutingState;
  note: string | null;
  activatedAt: string | null;
  activatedBy: string | null;
  createdAt: string;
  updatedAt: string;
  /** Balanced routing's affinity (the engine's default when unset). */
  affinity?: AffinityView;
}

export const DEFAULT_AFFINITY: AffinityView = { mode: 'conversation', window_min: 10 };

export function staleReason(p: FakeProfile, c: FakeConnection): string | null {
  const e = p.evidence;
  if (!e) return null;
  if (e.credentialRevision !== p.credentialRevision) return 'the credential was replaced after this verification';
  if (e.basis !== c.basis) return 'the endpoint, headers or protocol changed after this verification';
  return null;
}

function exclusion(p: FakeProfile, c: FakeConnection, model: string): string | null {
  if (!p.enabled) return 'disabled';
  const health = credentialHealth(p, Date.now()).state;
  if (health === 'missing') return p.kind === 'external' ? 'missing' : 'secret_missing';
  if (health === 'expired') return 'expired';
  if (!p.evidence) return 'no_evidence';
  if (staleReason(p, c)) return 'stale_evidence';
  if (p.evidence.outcome === 'auth_invalid') return 'auth_invalid';
  if (!p.evidence.models.some((m) => m.model === model && m.supported)) return 'model_unsupported';
  return null;
}

export function gates(c: FakeConnection, profiles: FakeProfile[]): GateView {
  const models: ModelGateView[] = c.models.map((model) => {
    const eligible: FakeProfile[] = [];
    const excluded: ExcludedView[] = [];
    for (const p of profiles) {
      const reason = exclusion(p, c, model);
      if (reason) excluded.push({ profile: p.id, label: p.label, reason });
      else eligible.push(p);
    }
    return { model, eligible: eligible.map((p) => p.id), eligible_labels: eligible.map((p) => p.label), excluded };
  });
  const failures: string[] = [];
  if (models.length === 0) failures.push(GATE_SENTENCES.no_model);
  for (const m of models.filter((m) => m.eligible.length === 0)) {
    const why = m.excluded.map((e) => `${e.label}: ${e.reason}`).join(', ');
    failures.push(GATE_SENTENCES.model_unserved.replace('{model}', m.model).replace('{why}', why));
  }
  if (models.length > 0 && models.every((m) => m.eligible.length < 2)) failures.push(GATE_SENTENCES.no_pair);
  return { ok: failures.length === 0, models, failures };
}

/** Suspends an active routed connection whose gates fail, resumes a suspended one. */
export function reconcile(c: FakeConnection, profiles: FakeProfile[]): void {
  if (c.mode === 'legacy') return;
  const g = gates(c, profiles);
  c.state = g.ok ? 'active' : 'suspended';
  c.note = g.ok
    ? null
    : `suspended (routing as legacy) because the activation gates no longer hold: ${g.failures.join('; ')}; run \`switchyard verify\` to restore them`;
}

export function profileView(p: FakeProfile): ProfileView {
  return {
    id: p.id,
    connection_id: p.connectionId,
    label: p.label,
    weight: p.weight,
    priority: p.priority,
    enabled: p.enabled,
    primary: p.primary,
    credential: p.hasSecret || p.signedIn ? 'present' : 'missing',
    credential_revision: p.credentialRevision,
    revision: p.revision,
    created_at: p.createdAt,
    updated_at: p.updatedAt,
    ...kindOf(p),
    client: p.client ?? null,
    config_dir: p.kind === 'external' ? `/tmp/switchyard-e2e/accounts/${p.id}` : null,
    login: null,
  };
}

const WEEK_MS = 7 * 24 * 3600 * 1000;

/** The engine's credential health (core/src/credential_health.rs), with its reasons. */
export function credentialHealth(p: FakeProfile, now: number): CredentialHealthView {
  const expires = p.expiresAt == null ? null : new Date(p.expiresAt).toISOString();
  switch (p.kind ?? 'api_key') {
    case 'external':
      return p.signedIn
        ? { state: 'ok', reason: null, expires_at: null }
        : { state: 'missing', reason: "the official CLI is not signed in in this profile's config directory; run profile login", expires_at: null };
    case 'token':
      if (!p.hasSecret) return { state: 'missing', reason: 'no token in the keychain; paste one with profile rotate', expires_at: expires };
      if (p.expiresAt != null && now >= p.expiresAt) {
        return { state: 'expired', reason: 'the token has expired; paste a new one with profile rotate', expires_at: expires };
      }
      if (p.expiresAt != null && p.expiresAt - now <= WEEK_MS) {
        return { state: 'expiring', reason: 'the token expires within 7 days; paste a new one before then', expires_at: expires };
      }
      return { state: 'ok', reason: null, expires_at: expires };
    default:
      return p.hasSecret
        ? { state: 'static', reason: null, expires_at: null }
        : { state: 'missing', reason: 'no key in the keychain', expires_at: null };
  }
}

/** A profile's kind and health as the engine gives them. */
function kindOf(p: FakeProfile): Pick<ProfileView, 'kind' | 'credential_health'> {
  return { kind: p.kind ?? 'api_key', credential_health: credentialHealth(p, Date.now()) };
}

function readiness(p: FakeProfile, c: FakeConnection, now: number): ProfileReadiness {
  const stale = staleReason(p, c);
  return {
    id: p.id,
    label: p.label,
    weight: p.weight,
    priority: p.priority,
    enabled: p.enabled,
    primary: p.primary,
    credential: p.hasSecret || p.signedIn ? 'present' : 'missing',
    ...kindOf(p),
    evidence: p.evidence ? (stale ? 'stale' : 'current') : 'none',
    evidence_detail: p.evidence
      ? { verified_at: p.evidence.at, outcome: p.evidence.outcome, models: p.evidence.models, stale_reason: stale }
      : null,
    health: p.health.filter((h) => h.state !== 'open' || !h.until || Date.parse(h.until) > now),
    cache: { read_tokens: 0, input_tokens: 0, hit_ratio: null },
    traffic: { conversations: 0, conversation_share: 0, prompt_tokens: 0, token_share: 0 },
  };
}

export function routingStatus(c: FakeConnection, profiles: FakeProfile[]): RoutingStatus {
  const now = Date.now();
  return {
    slug: c.slug,
    mode: c.mode,
    state: c.state,
    note: c.note,
    activated_at: c.activatedAt,
    activated_by: c.activatedBy,
    pending_mode: null,
    affinity: { ...(c.affinity ?? DEFAULT_AFFINITY) },
    quota_aware: { enabled: false, reserve_pct: 0 },
    gates: gates(c, profiles),
    profiles: profiles.map((p) => readiness(p, c, now)),
  };
}
