// Installs the fake engine behind `mockIPC` and records every command (arguments and answer)
// and every event the window receives, so tests can inspect all IPC traffic.
import { mockIPC } from '@tauri-apps/api/mocks';
import { emit } from '@tauri-apps/api/event';
import { FakeEngine } from './engine';

export interface IpcRecord {
  kind: 'invoke' | 'event';
  name: string;
  args: unknown;
  ok: boolean;
  response: unknown;
}

/** `ready` holds commands back until the fake is seeded. */
export function installFake(ready: () => Promise<void> = async () => {}): { fake: FakeEngine; log: IpcRecord[] } {
  const log: IpcRecord[] = [];
  const fake = new FakeEngine(async (event, payload) => {
    log.push({ kind: 'event', name: event, args: null, ok: true, response: structuredClone(payload) });
    await emit(event, payload);
  });
  mockIPC(
    async (cmd, args) => {
      await ready();
      const sent = structuredClone(args ?? {}) as Record<string, unknown>;
      try {
        const response = await fake.handle(cmd, (args ?? {}) as Record<string, unknown>);
        log.push({ kind: 'invoke', name: cmd, args: sent, ok: true, response: structuredClone(response) });
        return response;
      } catch (e) {
        log.push({ kind: 'invoke', name: cmd, args: sent, ok: false, response: structuredClone(e) });
        throw e;
      }
    },
    { shouldMockEvents: true },
  );
  return { fake, log };
}
