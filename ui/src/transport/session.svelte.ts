// The console's sign-in: an admin user's relay token is exchanged for a session cookie
// (`POST /console/api/session`; the token goes once, in the body, and is forgotten); a reload
// resumes the session (`GET`: a new CSRF token); sign-out ends it (`DELETE`). The CSRF token
// lives in this module's memory only — never in localStorage or sessionStorage.

type Listener = () => void;

class Session {
  user = $state<string | null>(null);
  csrf: string | null = null;
  /** Set when a call found the session gone (expired, revoked): the sign-in page says so. */
  lost = $state(false);
  private listeners: Listener[] = [];

  onExpired(f: Listener) {
    this.listeners.push(f);
  }

  expired() {
    if (this.user !== null) this.lost = true;
    this.user = null;
    this.csrf = null;
    for (const f of this.listeners) f();
  }

  /** Signs in; `null` when the relay refused the token, else the admin's name. */
  async signIn(token: string): Promise<string | null> {
    const response = await fetch('/console/api/session', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    if (!response.ok) return null;
    const body = (await response.json()) as { user: string; csrf: string };
    this.csrf = body.csrf;
    this.lost = false;
    this.user = body.user;
    return body.user;
  }

  /** Picks up a session the cookie still carries (after a reload). */
  async resume(): Promise<boolean> {
    const response = await fetch('/console/api/session', { credentials: 'same-origin' });
    if (!response.ok) return false;
    const body = (await response.json()) as { user: string; csrf: string };
    this.csrf = body.csrf;
    this.user = body.user;
    return true;
  }

  async signOut(): Promise<void> {
    await fetch('/console/api/session', {
      method: 'DELETE',
      credentials: 'same-origin',
      headers: { 'x-switchyard-csrf': this.csrf ?? '' },
    });
    this.user = null;
    this.csrf = null;
  }
}

export const session = new Session();
