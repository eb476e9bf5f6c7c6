// Flow tests: a production build of the UI in headless system Chromium (playwright-core) with the
// fake engine behind mocked IPC. Run with `npm run e2e` (global-setup builds into e2e/.build).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['e2e/**/*.e2e.ts'],
    environment: 'node',
    globalSetup: ['e2e/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
