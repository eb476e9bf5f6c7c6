import { describe, expect, it } from 'vitest';
import { clientBaseUrl, relaySnippets } from './relay';

describe('relaySnippets', () => {
  it('gives Claude Code its base URL and auth token for an anthropic connection', () => {
    const s = relaySnippets('anthropic', 'http://127.0.0.1:4141', 'claude', 'sy_tok', ['claude-x']);
    expect(s.map((x) => x.id)).toEqual(['claude-code', 'anthropic-sdk']);
    expect(s[0].text).toBe('export ANTHROPIC_BASE_URL=http://127.0.0.1:4141/c/claude\nexport ANTHROPIC_AUTH_TOKEN=sy_tok');
    expect(s[1].text).toContain('base_url="http://127.0.0.1:4141/c/claude", api_key="sy_tok"');
  });

  it('gives Gemini CLI and the google-genai SDK the versionless base URL for a gemini connection', () => {
    const s = relaySnippets('gemini', 'http://127.0.0.1:4141', 'gem', 'sy_tok', ['gemini-2.5-flash']);
    expect(s.map((x) => x.id)).toEqual(['gemini-cli', 'google-genai-sdk']);
    expect(s[0].text).toBe('export GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:4141/c/gem\nexport GEMINI_API_KEY=sy_tok');
    expect(s[1].text).toContain('genai.Client(api_key="sy_tok", http_options={"base_url": "http://127.0.0.1:4141/c/gem", "api_version": "v1beta"})');
    expect(s[1].text).toContain('model="gemini-2.5-flash"');
    expect(clientBaseUrl('http://127.0.0.1:4141', 'gem', 'gemini'), 'no /v1: the client adds v1beta/').toBe('http://127.0.0.1:4141/c/gem');
  });

  it('gives Codex, opencode and the OpenAI SDK the /v1 base URL for an openai connection', () => {
    const s = relaySnippets('openai', 'http://127.0.0.1:5000/', 'main', 'sy_tok', ['gpt-a', 'gpt-b']);
    expect(s.map((x) => x.id)).toEqual(['codex', 'opencode', 'openai-sdk']);
    expect(s[0].text).toContain('base_url = "http://127.0.0.1:5000/c/main/v1"');
    expect(s[0].text).toContain('model = "gpt-a"');
    expect(s[0].text).toContain('export SWITCHYARD_RELAY_TOKEN=sy_tok');
    const opencode = JSON.parse(s[1].text);
    expect(opencode.provider.switchyard.options).toEqual({ baseURL: 'http://127.0.0.1:5000/c/main/v1', apiKey: 'sy_tok' });
    expect(Object.keys(opencode.provider.switchyard.models)).toEqual(['gpt-a', 'gpt-b']);
    expect(s[2].text).toContain('export OPENAI_BASE_URL=http://127.0.0.1:5000/c/main/v1\nexport OPENAI_API_KEY=sy_tok');
  });

  it('builds base URLs per protocol', () => {
    expect(clientBaseUrl('http://127.0.0.1:4141', 's', 'openai')).toBe('http://127.0.0.1:4141/c/s/v1');
    expect(clientBaseUrl('http://127.0.0.1:4141', 's', 'anthropic')).toBe('http://127.0.0.1:4141/c/s');
  });
});
