import { describe, expect, it } from 'vitest';
import { useFake } from '../test/fake';
import { ConnectionStore } from './connectionDetail.svelte';

async function page(seed = 'two-profiles') {
  const env = await useFake(seed);
  const store = new ConnectionStore('main');
  await store.refresh();
  const id = (label: string) => store.profiles.find((p) => p.label === label)?.id ?? '';
  return { ...env, store, id };
}

describe('ConnectionStore', () => {
  it('loads the connection and its routing status', async () => {
    const { store } = await page();
    expect(store.profiles.map((p) => p.label)).toEqual(['primary', 'backup']);
    expect(store.status?.mode).toBe('legacy');
    expect(store.readiness(store.profiles[1].id)?.evidence).toBe('none');
  });

  it('offers reload and retry on a conflict, re-applying the edit to the fresh revision', async () => {
    const { fake, store, id, log } = await page();
    fake.touch('main', 'backup');
    const out = await store.setWeight(id('backup'), 5);
    expect(out.ok).toBe(false);
    expect(store.error?.code).toBe('conflict');
    expect(store.error?.retry, 'a conflict offers reload and retry').toBeTypeOf('function');
    await store.error?.retry?.();
    expect(store.error).toBeNull();
    expect(store.profiles.find((p) => p.label === 'backup')?.weight).toBe(5);
    const edits = log.filter((r) => r.name === 'profile_edit').map((r) => (r.args as { edit: { if_revision: number } }).edit.if_revision);
    expect(edits[1], 'the retry sends the revision read after the reload').toBe(edits[0] + 1);
  });

  it('keeps the gate report of a refused activation', async () => {
    const { store } = await page();
    const out = await store.activate('balanced');
    expect(out.ok).toBe(false);
    expect(store.error?.code).toBe('precondition');
    expect(store.refusal?.ok).toBe(false);
    expect(store.refusal?.models[0].excluded.map((e) => e.reason)).toEqual(['no_evidence', 'no_evidence']);
  });

  it('verifies all, tracks each profile to done, then activates', async () => {
    const { store } = await page();
    const out = await store.verify(null, false);
    expect(out.ok).toBe(true);
    expect(Object.values(store.verifier.progress).map((p) => p.state)).toEqual(['done', 'done']);
    expect(store.verifier.done).toBe(2);
    expect(store.status?.gates.ok).toBe(true);
    expect((await store.activate('priority')).ok).toBe(true);
    expect(store.status?.mode).toBe('priority');
    expect(store.refusal).toBeNull();
  });

  it('reorders by moving a profile up, sending each revision', async () => {
    const { store, id, log } = await page();
    await store.move(id('backup'), -1);
    expect(store.profiles.map((p) => p.label)).toEqual(['backup', 'primary']);
    expect(log.find((r) => r.name === 'profile_reorder')?.args).toMatchObject({ order: [{ id: id('backup') }, { id: id('primary') }] });
    expect(store.move(id('backup'), -1), 'the first cannot move up').toBeNull();
  });

  it('marks evidence stale after a key is replaced, and suspends routing', async () => {
    const { store, id } = await page();
    await store.verify(null, false);
    await store.activate('balanced');
    const out = await store.rotate(id('backup'), 'sk-new-key');
    expect(out.ok).toBe(true);
    expect(store.readiness(id('backup'))?.evidence).toBe('stale');
    expect(store.readiness(id('backup'))?.evidence_detail?.stale_reason).toContain('credential was replaced');
    expect(store.verifier.progress[id('backup')], 'the old verification result is forgotten').toBeUndefined();
    expect(store.status?.state).toBe('suspended');
  });

  it('does not offer a retry that would resend a secret', async () => {
    const { fake, store, id } = await page();
    fake.failNext.profile_rotate = { code: 'conflict', message: 'changed', gates: null };
    const out = await store.rotate(id('backup'), 'sk-new-key');
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.failure.retry).toBeUndefined();
  });

  it('refuses to remove the primary with a precondition error', async () => {
    const { store, id } = await page();
    const out = await store.removeProfile(id('primary'));
    expect(out.ok ? null : out.failure.code).toBe('precondition');
    expect((await store.removeProfile(id('backup'))).ok).toBe(true);
    expect(store.profiles.map((p) => p.label)).toEqual(['primary']);
  });

  it('resets a cooling-down circuit', async () => {
    const { fake, store, id } = await page();
    fake.coolDown('main', 'backup', 60, 'gpt-a');
    await store.refresh();
    expect(store.readiness(id('backup'))?.health).toHaveLength(1);
    await store.resetHealth(id('backup'), 'gpt-a');
    expect(store.readiness(id('backup'))?.health).toHaveLength(0);
  });

  it('adds a token and a sign-in, signs the sign-in in with Check again, and renews the token with its expiry', async () => {
    const env = await useFake('subscriptions');
    const store = new ConnectionStore('subs');
    await store.refresh();
    const byLabel = (label: string) => store.profiles.find((p) => p.label === label);
    expect(byLabel('max-1')?.kind).toBe('token');
    expect(byLabel('max-2')?.credential_health.state).toBe('missing');
    const id = byLabel('max-2')?.id ?? '';
    const cmd = await store.loginCommand(id);
    expect(cmd.ok && cmd.data).toBe('switchyard profile login subs max-2');
    const early = await store.checkLogin(id);
    expect(early.ok ? 'ok' : early.failure.code, 'still not signed in').toBe('precondition');
    env.fake.signIn('subs', 'max-2');
    const later = await store.checkLogin(id);
    expect(later.ok && later.data.credential_health.state).toBe('ok');
    expect(byLabel('max-2')?.credential_health.state, 'the page reloaded').toBe('ok');
    env.fake.expireIn('subs', 'max-1', -1000);
    await store.refresh();
    expect(byLabel('max-1')?.credential_health.state).toBe('expired');
    const until = new Date(Date.now() + 90 * 86_400_000).toISOString();
    const renewed = await store.rotate(byLabel('max-1')?.id ?? '', 'sk-ant-oat01-renewed', until);
    expect(renewed.ok && renewed.data.credential_health).toEqual({ state: 'ok', reason: null, expires_at: until });
    const sent = env.log.find((r) => r.name === 'profile_rotate')?.args as Record<string, unknown>;
    expect(sent.expires).toBe(until);
    expect(JSON.stringify(env.log.map((r) => r.response)), 'no answer carries a token').not.toContain('sk-ant-oat01');
  });
});
