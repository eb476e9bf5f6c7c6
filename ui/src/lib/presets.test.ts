import { describe, expect, it } from 'vitest';
import raw from './presets.json';
import { applyPreset, parsePresets, PRESETS } from './presets';
import { emptyConnectionForm } from './forms';

const WANTED = ['anthropic', 'openai', 'gemini', 'gemini-openai', 'openrouter', 'deepseek', 'moonshot', 'zhipu', 'dashscope', 'custom'];

describe('presets.json', () => {
  it('parses: every preset has a known protocol, an https base URL, models and a source', () => {
    // parsePresets throws naming the preset and field at fault.
    expect(() => parsePresets(raw)).not.toThrow();
    for (const p of PRESETS.filter((p) => p.id !== 'custom')) {
      expect(['openai', 'anthropic', 'gemini'], `${p.id}: protocol`).toContain(p.protocol);
      expect(new URL(p.baseUrl).protocol, `${p.id}: base URL must be https`).toBe('https:');
      expect(p.models.length, `${p.id}: a preset must give models to verify`).toBeGreaterThan(0);
      expect(p.source, `${p.id}: where the URL was checked`).toMatch(/^https:\/\//);
    }
  });

  it('offers the providers the issue names, custom last', () => {
    expect(PRESETS.map((p) => p.id)).toEqual(WANTED);
  });

  it('refuses a preset that would mislead the form', () => {
    const one = (p: Record<string, unknown>) => ({ presets: [{ id: 'x', label: 'X', protocol: 'openai', baseUrl: 'https://h/v1', models: ['m'], source: 'https://s', ...p }] });
    expect(() => parsePresets(one({}))).not.toThrow();
    expect(() => parsePresets(one({ protocol: 'vertex' }))).toThrow(/preset x: unknown protocol/);
    expect(() => parsePresets(one({ protocol: 'gemini', baseUrl: 'https://h/v1beta' }))).toThrow(/Gemini base URL has no version/);
    expect(() => parsePresets(one({ baseUrl: 'http://h/v1' }))).toThrow(/must be https/);
    expect(() => parsePresets(one({ baseUrl: 'https://h/v1/' }))).toThrow(/must not end/);
    expect(() => parsePresets(one({ protocol: 'anthropic', baseUrl: 'https://h/v1' }))).toThrow(/has no \/v1/);
    expect(() => parsePresets(one({ models: [] }))).toThrow(/at least one model/);
    expect(() => parsePresets(one({ models: ['a b'] }))).toThrow(/without spaces/);
    expect(() => parsePresets({ presets: [one({}).presets[0], one({}).presets[0]] })).toThrow(/duplicate id/);
  });
});

describe('the Gemini presets', () => {
  it('gemini speaks Gemini at the versionless base; gemini-openai is the same keys as an OpenAI connection', () => {
    const native = PRESETS.find((p) => p.id === 'gemini')!;
    expect(native).toMatchObject({ protocol: 'gemini', baseUrl: 'https://generativelanguage.googleapis.com' });
    const compat = PRESETS.find((p) => p.id === 'gemini-openai')!;
    expect(compat).toMatchObject({ protocol: 'openai', baseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai' });
    expect(PRESETS.find((p) => p.id === 'openai')!.baseUrl, 'the OpenAI base carries /v1').toBe('https://api.openai.com/v1');
  });
});

describe('applyPreset', () => {
  it('fills protocol, base URL and models, and the slug only when empty', () => {
    const ds = PRESETS.find((p) => p.id === 'deepseek')!;
    const filled = applyPreset(emptyConnectionForm(), ds);
    expect(filled).toMatchObject({ slug: 'deepseek', protocol: 'openai', baseUrl: 'https://api.deepseek.com', models: 'deepseek-chat, deepseek-reasoner' });
    const named = applyPreset({ ...emptyConnectionForm(), slug: 'team-ds', mappings: 'fast=deepseek-chat' }, ds);
    expect(named.slug, 'a typed slug is kept').toBe('team-ds');
    expect(named.mappings, 'mappings are not the preset’s business').toBe('fast=deepseek-chat');
  });

  it('custom clears the endpoint and keeps the slug empty', () => {
    const custom = PRESETS.find((p) => p.id === 'custom')!;
    const v = applyPreset({ ...emptyConnectionForm(), baseUrl: 'https://old', models: 'a' }, custom);
    expect(v).toMatchObject({ slug: '', baseUrl: '', models: '' });
  });
});
