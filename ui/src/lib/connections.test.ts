import { describe, expect, it } from 'vitest';
import type { ConnectionDetail } from '../bindings';
import { ConnectionsStore } from './connections.svelte';

const detail = { connection: { id: 'c_1', slug: 'main' }, profiles: [] } as unknown as ConnectionDetail;

describe('ConnectionsStore', () => {
  it('keeps the loaded connections', async () => {
    const store = new ConnectionsStore(async () => ({ status: 'ok', data: [detail] }));
    await store.refresh();
    expect(store.items.map((d) => d.connection.slug)).toEqual(['main']);
    expect(store.error).toBeNull();
    expect(store.loaded).toBe(true);
  });

  it('explains errors by code and keeps the previous list', async () => {
    let fail = false;
    const store = new ConnectionsStore(async () =>
      fail ? { status: 'error', error: { code: 'keychain_unavailable', message: 'no bus' } } : { status: 'ok', data: [detail] },
    );
    await store.refresh();
    fail = true;
    await store.refresh();
    expect(store.error).toContain('keychain is locked');
    expect(store.items).toHaveLength(1);
  });

  it('reports a backend that cannot be reached', async () => {
    const store = new ConnectionsStore(async () => {
      throw new Error('ipc down');
    });
    await store.refresh();
    expect(store.error).toContain('ipc down');
    expect(store.loading).toBe(false);
  });
});
