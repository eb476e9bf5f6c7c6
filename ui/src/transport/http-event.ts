// `@tauri-apps/api/event` in the console build: the relay pushes no events over HTTP. Listeners
// are accepted and never called (screens that wait for an event — verification progress — also
// get the command's own result); emitting does nothing.
export type UnlistenFn = () => void;
export type EventCallback<T> = (event: { event: string; id: number; payload: T }) => void;
export type EventTarget = unknown;

export async function listen<T>(_event: string, _handler: EventCallback<T>): Promise<UnlistenFn> {
  return () => {};
}

export async function once<T>(_event: string, _handler: EventCallback<T>): Promise<UnlistenFn> {
  return () => {};
}

export async function emit(_event: string, _payload?: unknown): Promise<void> {}

export async function emitTo(_target: unknown, _event: string, _payload?: unknown): Promise<void> {}
