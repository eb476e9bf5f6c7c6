// Bundles the fake engine (e2e/fake/entry.ts) into one classic script for `page.addInitScript`.
import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

export default defineConfig({
  logLevel: 'warn',
  publicDir: false,
  build: {
    outDir: fileURLToPath(new URL('./.build/fake', import.meta.url)),
    emptyOutDir: true,
    minify: false,
    lib: {
      entry: fileURLToPath(new URL('./fake/entry.ts', import.meta.url)),
      formats: ['iife'],
      name: 'SwitchyardFake',
      fileName: () => 'fake-ipc.js',
    },
  },
});
