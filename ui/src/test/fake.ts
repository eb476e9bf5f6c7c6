// Unit tests run the stores against the same fake engine the flow tests use, behind mockIPC.
import { clearMocks } from '@tauri-apps/api/mocks';
import { afterEach } from 'vitest';
import type { FakeEngine } from '../../e2e/fake/engine';
import { installFake, type IpcRecord } from '../../e2e/fake/install';
import { seeds } from '../../e2e/fake/seeds';

afterEach(() => clearMocks());

export async function useFake(seed = 'empty'): Promise<{ fake: FakeEngine; log: IpcRecord[] }> {
  const { fake, log } = installFake();
  fake.verifyDelayMs = 0;
  await seeds[seed](fake);
  log.length = 0;
  return { fake, log };
}
