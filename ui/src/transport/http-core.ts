// The console's transport: what `@tauri-apps/api/core` is in the console build (vite.config.ts
// aliases it here), so the generated bindings (src/bindings.ts) and every store call the relay's
// `/console/api/call/{command}` with the same command names, arguments and result types as the
// desktop's IPC. The session cookie travels by itself (HttpOnly; this code never sees it); the
// CSRF token is kept in memory only and sent on every call. A rejected call throws the IPC error
// shape `{code, message, gates}`, which the bindings' typedError turns into `{status: "error"}`.
import { session } from './session.svelte';

export async function invoke<T>(cmd: string, args: Record<string, unknown> = {}): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`/console/api/call/${encodeURIComponent(cmd)}`, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-switchyard-csrf': session.csrf ?? '' },
      body: JSON.stringify(args),
    });
  } catch {
    throw { code: 'unreachable', message: 'the relay could not be reached', gates: null };
  }
  const text = await response.text();
  const body: unknown = text ? JSON.parse(text) : null;
  if (response.status === 401) session.expired();
  if (!response.ok) {
    const e = (body ?? {}) as { code?: string; message?: string; gates?: unknown };
    throw { code: e.code ?? 'internal', message: e.message ?? `HTTP ${response.status}`, gates: e.gates ?? null };
  }
  return body as T;
}

/** Tauri's `Channel`, unused over HTTP (kept so imports resolve). */
export class Channel<T> {
  onmessage: (message: T) => void = () => {};
}
