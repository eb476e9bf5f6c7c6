// Small builders of IPC values for component tests.
import type { GateView, HealthView, ProfileReadiness, ProfileView } from '../lib/types';

export function profile(over: Partial<ProfileView> = {}): ProfileView {
  return {
    id: 'p_1', connection_id: 'c_1', label: 'a', weight: 1, priority: 0, enabled: true, primary: false,
    credential: 'present', credential_revision: 1, revision: 1, created_at: '', updated_at: '',
    kind: 'api_key', credential_health: { state: 'static', reason: null, expires_at: null }, client: null, config_dir: null,
    login: null,
    ...over,
  };
}

export function readiness(over: Partial<ProfileReadiness> = {}): ProfileReadiness {
  return {
    id: 'p_1', label: 'a', weight: 1, priority: 0, enabled: true, primary: false, credential: 'present',
    kind: 'api_key', credential_health: { state: 'static', reason: null, expires_at: null },
    evidence: 'none', evidence_detail: null, health: [],
    cache: { read_tokens: 0, input_tokens: 0, hit_ratio: null },
    traffic: { conversations: 0, conversation_share: 0, prompt_tokens: 0, token_share: 0 }, ...over,
  };
}

export function health(over: Partial<HealthView> = {}): HealthView {
  return { model: null, state: 'closed', kind: null, until: null, ...over };
}

export const failingGates: GateView = {
  ok: false,
  models: [
    { model: 'gpt-a', eligible: ['p_1'], eligible_labels: ['primary'], excluded: [{ profile: 'p_2', label: 'backup', reason: 'no_evidence' }] },
    { model: 'gpt-b', eligible: [], eligible_labels: [], excluded: [
      { profile: 'p_1', label: 'primary', reason: 'model_unsupported' },
      { profile: 'p_2', label: 'backup', reason: 'stale_evidence' },
    ] },
  ],
  failures: ['model gpt-b has no eligible profile (primary: model_unsupported, backup: stale_evidence)', 'no model has two eligible profiles'],
};
