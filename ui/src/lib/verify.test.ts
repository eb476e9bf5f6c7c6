import { describe, expect, it } from 'vitest';
import type { VerifyProgress, VerifyResult } from './types';
import { VerifyTracker } from './verify.svelte';

const tick = () => new Promise((r) => setTimeout(r, 0));

const result = (id: string, outcome: VerifyResult['outcome'] = 'verified'): VerifyResult => ({
  profile_id: id, label: id, outcome, models: [], failure_kind: outcome === 'verified' ? null : 'auth_invalid', detail: '',
});

function harness() {
  let push: (e: VerifyProgress) => void = () => {};
  let release: (r: VerifyResult[]) => void = () => {};
  let unlistened = false;
  const listen = async (cb: (e: { payload: VerifyProgress }) => void) => {
    push = (payload) => cb({ payload });
    return () => (unlistened = true);
  };
  const call = () =>
    new Promise<never>((resolve) => {
      release = (results) => resolve({ status: 'ok', data: { slug: 'main', results, routing: null } } as never);
    });
  const tracker = new VerifyTracker('main', call as never, listen);
  return { tracker, push: (e: VerifyProgress) => push(e), release: (r: VerifyResult[]) => release(r), unlistened: () => unlistened };
}

describe('VerifyTracker', () => {
  it('moves each profile from queued to running to done as events arrive', async () => {
    const h = harness();
    const run = h.tracker.run(['a', 'b'], null, false);
    await tick();
    expect(h.tracker.running).toBe(true);
    expect(h.tracker.progress.a.state).toBe('queued');
    h.push({ slug: 'main', progress: { event: 'started', profile_id: 'a', label: 'a', index: 1, total: 2 } });
    expect(h.tracker.progress.a.state).toBe('running');
    h.push({ slug: 'main', progress: { event: 'finished', result: result('a'), done: 1, total: 2 } });
    expect(h.tracker.progress.a.state).toBe('done');
    expect(h.tracker.done).toBe(1);
    h.push({ slug: 'other', progress: { event: 'started', profile_id: 'b', label: 'b', index: 2, total: 2 } });
    expect(h.tracker.progress.b.state, 'events of other connections are ignored').toBe('queued');
    h.release([result('a'), result('b', 'auth_invalid')]);
    await run;
    expect(h.tracker.progress.b, 'the report fills in what events missed').toMatchObject({ state: 'done', result: { outcome: 'auth_invalid' } });
    expect(h.tracker.done).toBe(2);
    expect(h.tracker.running).toBe(false);
    expect(h.unlistened()).toBe(true);
  });

  it('counts only the profiles of the current run', async () => {
    const h = harness();
    const first = h.tracker.run(['a', 'b'], null, false);
    await tick();
    h.release([result('a'), result('b')]);
    await first;
    const second = h.tracker.run(['b'], 'b', false);
    await tick();
    expect(h.tracker.done).toBe(0);
    expect(h.tracker.total).toBe(1);
    h.release([result('b')]);
    await second;
    expect(h.tracker.done).toBe(1);
  });
});

describe('VerifyTracker without events', () => {
  it('still shows every result from the report when listening fails', async () => {
    const call = async () => ({ status: 'ok', data: { slug: 'main', results: [result('a')], routing: null } });
    const tracker = new VerifyTracker('main', call as never, () => Promise.reject(new Error('not allowed')));
    const out = await tracker.run(['a'], null, false);
    expect(out.ok).toBe(true);
    expect(tracker.progress.a.state).toBe('done');
    expect(tracker.running).toBe(false);
  });
});
