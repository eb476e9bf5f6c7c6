import { describe, expect, it } from 'vitest';
import { useFake } from '../test/fake';
import { ConnectionsStore, connectionInput, type Backend } from './connectionList.svelte';
import { emptyConnectionForm } from './forms';

describe('ConnectionsStore', () => {
  it('loads every connection with its routing status', async () => {
    await useFake('two-profiles');
    const store = new ConnectionsStore();
    await store.refresh();
    expect(store.items.map((d) => d.connection.slug)).toEqual(['main']);
    expect(store.statuses.main.gates.ok, 'nothing is verified yet').toBe(false);
    expect(store.error).toBeNull();
    expect(store.loaded).toBe(true);
  });

  it('explains errors by code, keeps the previous list and offers a retry', async () => {
    const { fake } = await useFake('two-profiles');
    const store = new ConnectionsStore();
    await store.refresh();
    fake.failNext.list_connections = { code: 'keychain_unavailable', message: 'no bus', gates: null };
    await store.refresh();
    expect(store.error?.code).toBe('keychain_unavailable');
    expect(store.error?.title).toContain('keychain is locked');
    expect(store.items).toHaveLength(1);
    await store.error?.retry?.();
    expect(store.error, 'the retry reloaded successfully').toBeNull();
  });

  it('reports a backend that cannot be reached', async () => {
    const down = { listConnections: async () => Promise.reject(new Error('ipc down')) } as unknown as Backend;
    const store = new ConnectionsStore(down);
    await store.refresh();
    expect(store.error?.code).toBe('unreachable');
    expect(store.error?.message).toContain('ipc down');
    expect(store.loading).toBe(false);
  });

  it('adds a connection, sending the key only as the secret argument', async () => {
    const { log } = await useFake();
    const store = new ConnectionsStore();
    const form = { ...emptyConnectionForm(), slug: 'x', baseUrl: 'https://api.example.com/v1', models: 'm1, m2\nm3' };
    const out = await store.add(form, 'sk-unit-canary');
    expect(out.ok).toBe(true);
    expect(store.items[0].profiles[0].label).toBe('primary');
    const add = log.find((r) => r.name === 'connection_add');
    expect(add?.args).toMatchObject({ secret: 'sk-unit-canary', input: { models: ['m1', 'm2', 'm3'] } });
    const elsewhere = log.filter((r) => r !== add).map((r) => JSON.stringify(r));
    expect(elsewhere.join('\n')).not.toContain('sk-unit-canary');
    expect(JSON.stringify(add?.response)).not.toContain('sk-unit-canary');
  });

  it('sends no secret argument when the key field is empty', async () => {
    const { log } = await useFake();
    const out = await new ConnectionsStore().add({ ...emptyConnectionForm(), slug: 'y', baseUrl: 'https://h/v1' }, '');
    expect(out.ok).toBe(true);
    expect(log.find((r) => r.name === 'connection_add')?.args).toMatchObject({ secret: null });
  });

  it('builds the command input from the form text', () => {
    const input = connectionInput({
      slug: ' s ', protocol: 'anthropic', baseUrl: ' https://h ', models: 'a,,b', mappings: 'x=y\n\n', headers: [{ name: 'X-A', value: ' 1 ' }, { name: ' ', value: 'dropped' }],
    });
    expect(input).toEqual({ slug: 's', protocol: 'anthropic', base_url: 'https://h', models: ['a', 'b'], mappings: ['x=y'], headers: ['X-A: 1'] });
  });
});
