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
  /** Two verified profiles, balanced routing active. */
  balanced: async (fake) => {
    await seeds['two-profiles'](fake);
    fake.verifyDelayMs = 0;
    await call(fake, 'verify', { slug: 'main', profile: null, deep: false });
    await call(fake, 'routing_activate', { slug: 'main', mode: 'balanced' });
    fake.verifyDelayMs = 120;
  },
};
