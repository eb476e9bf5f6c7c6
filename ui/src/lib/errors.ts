// Errors as the window shows them: by code (never by message text), with the gate report of
// a refused activation and, for conflicts, a "reload and retry" action.
import type { ErrorCode, GateView, IpcError, IpcResult } from './types';

export type FailureCode = ErrorCode | 'unreachable';

export interface Failure {
  code: FailureCode;
  /** Short words for the code. */
  title: string;
  /** The engine's message. */
  message: string;
  gates: GateView | null;
  /** Reloads and runs the failed action again (offered for conflicts). */
  retry?: () => Promise<unknown>;
}

const TITLES: Record<FailureCode, string> = {
  invalid: 'Some input was not valid.',
  conflict: 'The data changed elsewhere; reload and retry.',
  not_found: 'It no longer exists.',
  precondition: 'A precondition does not hold.',
  keychain_unavailable: 'The OS keychain is locked or unavailable.',
  internal: 'Something went wrong inside Switchyard.',
  unreachable: 'Could not reach the Switchyard backend.',
};

/** An IPC error thrown by [`unwrap`]. */
export class IpcFailure extends Error {
  constructor(readonly error: IpcError) {
    super(error.message);
  }
}

/** The data of a command result, or throws [`IpcFailure`]. */
export async function unwrap<T>(result: Promise<IpcResult<T>>): Promise<T> {
  const r = await result;
  if (r.status === 'error') throw new IpcFailure(r.error);
  return r.data;
}

export function describeError(e: Pick<IpcError, 'code' | 'message'>): string {
  return `${TITLES[e.code] ?? TITLES.internal} ${e.message}`;
}

/** Any thrown value as a [`Failure`]. */
export function toFailure(e: unknown): Failure {
  if (e instanceof IpcFailure) {
    const code = e.error.code in TITLES ? e.error.code : 'internal';
    return { code, title: TITLES[code], message: e.error.message, gates: e.error.gates ?? null };
  }
  const message = e instanceof Error ? e.message : String(e);
  return { code: 'unreachable', title: TITLES.unreachable, message, gates: null };
}

export type Outcome<T> = { ok: true; data: T } | { ok: false; failure: Failure };

/** Runs `action`, catching its failure. */
export async function attempt<T>(action: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, data: await action() };
  } catch (e) {
    return { ok: false, failure: toFailure(e) };
  }
}

/** A failure whose "reload and retry", once it succeeds, also runs `done` (closes a dialog). */
export function closeOnRetry(failure: Failure, done: () => void): Failure {
  const retry = failure.retry;
  if (!retry) return failure;
  return {
    ...failure,
    retry: async () => {
      const out = (await retry()) as Outcome<unknown> | undefined;
      if (out?.ok) done();
      return out;
    },
  };
}
