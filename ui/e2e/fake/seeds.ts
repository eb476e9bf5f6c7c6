// Named starting states for flow tests.
import type { FakeEngine } from './engine';

async function call(fake: FakeEngine, cmd: string, args: Record<string, unknown>) {
  await fake.handle(cmd, args);
}

const connection = (slug: string, models = ['gpt-a', 'gpt-b']) => ({
  input: { slug, protocol: 'openai', base_url: 'https://api.example.com/v1', models, mappings: [], headers: ['OpenAI-Organization: org-1'] },
});

export const seeds: Record<string, (fake: FakeEngine) => Promise<void>> = {
  empty: async () => {},
  /** One legacy connection with its primary key and a second, unverified profile. */
  'two-profiles': async (fake) => {
    await call(fake, 'connection_add', { ...connection('main'), secret: 'sk-seed-primary-0001' });
    await call(fake, 'profile_add', { slug: 'main', input: { label: 'backup', weight: 3, priority: null }, secret: 'sk-seed-backup-0002' });
  },
  /**
   * An Anthropic connection `subs` of subscription accounts: its primary API key, `max-1` a
   * Claude Code token that expires in 30 days, `max-2` a Claude Code sign-in not yet signed in.
   */
  subscriptions: async (fake) => {
    const input = { slug: 'subs', protocol: 'anthropic', base_url: 'https://api.anthropic.com', models: ['claude-sonnet-4'], mappings: [], headers: [] };
    await call(fake, 'connection_add', { input, secret: 'sk-ant-api03-seed-0001' });
    const expires = new Date(Date.now() + 30 * 24 * 3600 * 1000).toISOString();
    await call(fake, 'profile_add', {
      slug: 'subs', input: { label: 'max-1', weight: 1, priority: null }, secret: 'sk-ant-oat01-seed-max-1',
      credential: { kind: 'token', client: 'claude-code', expires_at: expires },
    });
    await call(fake, 'profile_add', {
      slug: 'subs', input: { label: 'max-2', weight: 1, priority: null }, secret: null,
      credential: { kind: 'external', client: 'claude-code', expires_at: null },
    });
  },
  /** Two verified profiles, balanced routing active. */
  balanced: async (fake) => {
    await seeds['two-profiles'](fake);
    fake.verifyDelayMs = 0;
    await call(fake, 'verify', { slug: 'main', profile: null, deep: false });
    await call(fake, 'routing_activate', { slug: 'main', mode: 'balanced' });
    fake.verifyDelayMs = 120;
  },
};
