/**
 * A vendor's OAuth token service, for the login-refresh tests (served by a TLS stand-in at the
 * vendor's own host, tls-stand-in.ts): each refresh grant with the refresh token it issued last
 * is answered with a new access token and a new refresh token (rotated, as OpenAI's and
 * Anthropic's are); any other is refused as a reused one. `current` is the access token the
 * fake API should accept.
 */
export interface FakeTokenService {
  /** The access token last issued (the person's own before the first refresh). */
  current: string;
  /** The refresh token each refresh grant carried, in order. */
  refreshes: string[];
  /** The answer to one request's body (JSON or a form, as the CLI sends it). */
  answer(body: string): { status: number; body: unknown };
}

export function fakeTokenService(
  first: { access: string; refresh: string },
  /** The vendor's own answer fields for a refresh's new tokens. */
  issue: (tokens: { access: string; refresh: string }) => Record<string, unknown>,
  /** The n-th refresh's new tokens (n from 1; plain names unless the CLI reads its access token's claims). */
  mint: (n: number) => { access: string; refresh: string } = (n) => ({
    access: `access-token-${n + 1}`,
    refresh: `refresh-token-${n + 1}`,
  }),
): FakeTokenService {
  let refresh = first.refresh;
  const self: FakeTokenService = {
    current: first.access,
    refreshes: [],
    answer(raw) {
      const body = raw.trim().startsWith('{')
        ? (JSON.parse(raw) as Record<string, string>)
        : Object.fromEntries(new URLSearchParams(raw));
      const given = body.refresh_token ?? '';
      self.refreshes.push(given);
      if (body.grant_type !== 'refresh_token' || given !== refresh)
        return { status: 400, body: { error: 'invalid_grant', error_description: 'refresh token reused or unknown' } };
      const tokens = mint(self.refreshes.length);
      self.current = tokens.access;
      refresh = tokens.refresh;
      return { status: 200, body: issue(tokens) };
    },
  };
  return self;
}

/** A JSON Web Token with these claims and no signature (the CLIs read a login's claims without checking one). */
export function unsignedJwt(claims: Record<string, unknown>): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.unsigned`;
}
