import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * Who may use the dashboard, and proof that a POST came from its own pages.
 *
 * - Every request needs the access token: in `?token=` once (the answer sets
 *   a session cookie and redirects to the same URL without the token, so it
 *   does not stay in the address bar), then the cookie; or in an
 *   `Authorization: Bearer` header (curl, read-only pages).
 * - A state-changing request is a POST from a session, carrying that
 *   session's CSRF token in the form, with an Origin (or, failing that, a
 *   Referer) naming this server. The cookie is SameSite=Strict as well, so a
 *   page elsewhere cannot even make the browser send it.
 *
 * Tokens come from the operating system's CSPRNG (node:crypto), not from the
 * engine's seeded Rng: that one exists to make runs reproducible, which is
 * the opposite of what a secret needs.
 */
export interface Session {
  id: string;
  csrf: string;
  /** Who the operator said they are on their last confirmed action; prefilled on the next. */
  operator: string;
  /** A one-shot message for the next page (the outcome of an action). */
  flash: { kind: 'ok' | 'error'; text: string } | null;
}

/** How many sessions are kept; the oldest is forgotten beyond this (its browser logs in with the token again). */
const MAX_SESSIONS = 1_000;

export function newSecret(): string {
  return randomBytes(24).toString('base64url');
}

/** Constant-time comparison of two secrets of any length (hashing first hides the length too). */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export type Access =
  | { kind: 'session'; session: Session }
  /** The token came in the URL: set the cookie, redirect without it. */
  | { kind: 'login'; session: Session }
  | { kind: 'bearer' }
  | { kind: 'refused' };

export class DashboardAuth {
  private readonly sessions = new Map<string, Session>();

  constructor(
    readonly accessToken: string,
    /** Cookie names are per host, not per port: the port keeps two dashboards on one machine apart. */
    readonly cookieName: string,
    /** Origins besides this server's own Host that may POST: a TLS proxy's public address that rewrites Host. */
    readonly publicOrigins: readonly string[] = [],
  ) {
    if (accessToken.length < 16) throw new TypeError('token: expected at least 16 characters');
  }

  check(req: IncomingMessage, url: URL): Access {
    const fromUrl = url.searchParams.get('token');
    if (fromUrl !== null) {
      if (!sameSecret(fromUrl, this.accessToken)) return { kind: 'refused' };
      return { kind: 'login', session: this.existing(req) ?? this.create() };
    }
    const session = this.existing(req);
    if (session) return { kind: 'session', session };
    const auth = req.headers.authorization;
    if (auth?.startsWith('Bearer ') && sameSecret(auth.slice(7), this.accessToken)) return { kind: 'bearer' };
    return { kind: 'refused' };
  }

  cookieHeader(session: Session): string {
    return `${this.cookieName}=${session.id}; HttpOnly; SameSite=Strict; Path=/`;
  }

  /**
   * Why a POST is refused, or null when it may proceed: it must come from a
   * session, name this server in Origin (or Referer), and carry the
   * session's CSRF token.
   */
  refusePost(req: IncomingMessage, access: Access, form: URLSearchParams): string | null {
    if (access.kind !== 'session') return 'a change needs a browser session: open the dashboard with ?token= first';
    return postChecks.origin(req, this.publicOrigins) ?? postChecks.csrf(form, access.session);
  }

  private existing(req: IncomingMessage): Session | null {
    const id = readCookie(req.headers.cookie, this.cookieName);
    return id === null ? null : (this.sessions.get(id) ?? null);
  }

  private create(): Session {
    if (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    const session: Session = { id: newSecret(), csrf: newSecret(), operator: '', flash: null };
    this.sessions.set(session.id, session);
    return session;
  }
}

/**
 * What a POST from a session must show besides the session, each check
 * answering why it refuses or null. An internal table the package does not
 * export: the harness's mutants swap one entry (a check skipped, as a
 * refactor might) to show the gate's invariant catching it.
 */
export const postChecks = {
  /** The request names this server in Origin (or, failing that, Referer): same host over http or https, or a configured public origin. */
  origin(req: IncomingMessage, publicOrigins: readonly string[]): string | null {
    const host = req.headers.host ?? '';
    // Same host over http, or over https through a proxy that keeps the Host header, or a configured public origin.
    const allowed = [`http://${host}`, `https://${host}`, ...publicOrigins];
    const here = allowed[0];
    const origin = req.headers.origin;
    if (origin !== undefined) return allowed.includes(origin) ? null : `Origin ${origin} is not this dashboard (${here})`;
    const referer = req.headers.referer;
    if (referer === undefined) return 'the request names no Origin or Referer; expected this dashboard';
    return allowed.some((o) => referer === o || referer.startsWith(`${o}/`)) ? null : `Referer ${referer} is not this dashboard (${here})`;
  },
  /** The form carries the session's CSRF token. */
  csrf(form: URLSearchParams, session: Session): string | null {
    const csrf = form.get('_csrf');
    return csrf === null || !sameSecret(csrf, session.csrf) ? 'the form carries no valid CSRF token; reload the page and try again' : null;
  },
};

function readCookie(header: string | undefined, name: string): string | null {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}
