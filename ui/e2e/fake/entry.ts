// The init script of flow tests (bundled to an IIFE): installs the fake engine before the app
// starts, seeds it as `window.__E2E_SEED__` names, and exposes it to the test.
import { installFake } from './install';
import { seeds } from './seeds';

declare global {
  interface Window {
    __E2E_SEED__?: string;
    __fake: import('./engine').FakeEngine;
    __ipcLog: import('./install').IpcRecord[];
    __seeded: Promise<void>;
  }
}

const { fake, log } = installFake(() => window.__seeded);
window.__fake = fake;
window.__ipcLog = log;
const seed = seeds[window.__E2E_SEED__ ?? 'empty'];
// Seeding calls the fake directly (not through IPC); the window's commands wait for it, and
// the events it caused are dropped from the log.
window.__seeded = seed(fake).then(() => {
  log.length = 0;
});
