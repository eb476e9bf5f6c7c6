// Endpoint presets offered when adding a connection (data in presets.json, edited freely):
// a preset only fills the form — protocol, base URL, models to verify — and is never stored
// or consulted by the routing.
import data from './presets.json';
import type { ConnectionFormValues } from './forms';

export type PresetProtocol = 'openai' | 'anthropic' | 'gemini';

export interface Preset {
  id: string;
  label: string;
  protocol: PresetProtocol;
  /** Empty only for the "custom" preset. */
  baseUrl: string;
  models: string[];
  /** Where the base URL and the model ids were checked. */
  source: string;
  note?: string;
}

const PROTOCOLS: readonly string[] = ['openai', 'anthropic', 'gemini'];

/** Checks every preset of the file; throws with the preset's id and the field at fault. */
export function parsePresets(raw: unknown): Preset[] {
  const list = (raw as { presets?: unknown })?.presets;
  if (!Array.isArray(list)) throw new Error('presets.json: "presets" must be a list');
  const seen = new Set<string>();
  return list.map((p: Record<string, unknown>, i) => {
    const where = `preset ${typeof p?.id === 'string' ? p.id : `#${i + 1}`}`;
    const str = (k: string) => {
      if (typeof p[k] !== 'string') throw new Error(`${where}: "${k}" must be a string`);
      return p[k] as string;
    };
    const id = str('id');
    if (!/^[a-z0-9][a-z0-9-]*$/.test(id)) throw new Error(`${where}: id must be a lowercase slug`);
    if (seen.has(id)) throw new Error(`${where}: duplicate id`);
    seen.add(id);
    const protocol = str('protocol');
    if (!PROTOCOLS.includes(protocol)) throw new Error(`${where}: unknown protocol "${protocol}"`);
    const baseUrl = str('baseUrl');
    const custom = id === 'custom';
    if (!custom) {
      let url: URL;
      try {
        url = new URL(baseUrl);
      } catch {
        throw new Error(`${where}: baseUrl is not a URL`);
      }
      if (url.protocol !== 'https:') throw new Error(`${where}: baseUrl must be https`);
      if (baseUrl.endsWith('/')) throw new Error(`${where}: baseUrl must not end with "/"`);
      if (protocol === 'anthropic' && url.pathname.endsWith('/v1')) {
        throw new Error(`${where}: an Anthropic base URL has no /v1 (the relay appends /v1/messages)`);
      }
      if (protocol === 'gemini' && /\/v1(beta|alpha)?$/.test(url.pathname)) {
        throw new Error(`${where}: a Gemini base URL has no version (the client's path carries v1beta/)`);
      }
    }
    const models = p.models;
    if (!Array.isArray(models) || models.some((m) => typeof m !== 'string' || m === '' || /\s|,/.test(m))) {
      throw new Error(`${where}: models must be ids without spaces or commas`);
    }
    if (!custom && models.length === 0) throw new Error(`${where}: needs at least one model to verify`);
    if (!custom && !str('source').startsWith('https://')) throw new Error(`${where}: source must be an https link`);
    const note = p.note === undefined ? undefined : str('note');
    return { id, label: str('label'), protocol: protocol as PresetProtocol, baseUrl, models: models as string[], source: str('source'), note };
  });
}

export const PRESETS: Preset[] = parsePresets(data);

/** The form with the preset's protocol, base URL and models; slug (when empty) becomes the preset's id. */
export function applyPreset(values: ConnectionFormValues, preset: Preset): ConnectionFormValues {
  return {
    ...values,
    slug: values.slug.trim() === '' && preset.id !== 'custom' ? preset.id : values.slug,
    protocol: preset.protocol,
    baseUrl: preset.baseUrl,
    models: preset.models.join(', '),
  };
}
