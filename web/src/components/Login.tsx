// Log in with email and password (POST /fetch_api_key gives the API key), or with the API key itself.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, describeError, request, type Credentials } from '../api.ts';

type Mode = 'password' | 'key';

function loginError(err: unknown, mode: Mode): string {
  if (err instanceof ApiError && err.status === 401 && (err.code === 'AUTHENTICATION_FAILED' || err.code === 'UNAUTHORIZED')) {
    return mode === 'password' ? 'Wrong email or password.' : 'Wrong email or API key.';
  }
  return describeError(err);
}

export function Login({ notice, onLogin }: { notice: string | null; onLogin: (c: Credentials) => void }) {
  const [mode, setMode] = useState<Mode>('password');
  const [email, setEmail] = useState('');
  const [secret, setSecret] = useState('');
  const [error, setError] = useState<string | null>(notice);
  const [busy, setBusy] = useState(false);
  const [realmName, setRealmName] = useState<string | null>(null);
  /** When a rate limit lets the next attempt through (ms). */
  const [retryAt, setRetryAt] = useState(0);
  const [now, setNow] = useState(Date.now());

  useEffect(() => {
    request('GET', '/server_settings')
      .then((s) => {
        setRealmName(s.realm_name);
        document.title = `Log in · ${s.realm_name}`;
      })
      .catch((err) => setError(describeError(err)));
  }, []);

  useEffect(() => {
    if (retryAt <= now) return;
    const timer = setTimeout(() => setNow(Date.now()), 1000);
    return () => clearTimeout(timer);
  }, [retryAt, now]);

  const waitSeconds = Math.max(0, Math.ceil((retryAt - now) / 1000));
  const plural = waitSeconds === 1 ? '' : 's';
  const message = retryAt ? (waitSeconds ? `Too many attempts. Try again in ${waitSeconds} second${plural}.` : 'You can try again now.') : error;

  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setRetryAt(0);
    try {
      if (mode === 'password') {
        const r = await request('POST', '/fetch_api_key', { username: email.trim(), password: secret });
        onLogin({ email: r.email, apiKey: r.api_key });
      } else {
        const credentials = { email: email.trim(), apiKey: secret.trim() };
        await request('GET', '/users/me', {}, credentials);
        onLogin(credentials);
      }
    } catch (err) {
      setError(loginError(err, mode));
      if (err instanceof ApiError && err.retryAfter) {
        setRetryAt(Date.now() + err.retryAfter * 1000);
        setNow(Date.now());
      }
      setBusy(false);
    }
  }

  const secretId = mode === 'password' ? 'login-password' : 'login-key';
  return (
    <main class="login-page">
      <form class="card login-card" onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">Log in{realmName ? ` to ${realmName}` : ''}</h1>
        <div class="segmented" role="radiogroup" aria-label="Log in with">
          {(['password', 'key'] as const).map((m) => (
            <label key={m} class={mode === m ? 'selected' : ''}>
              <input
                type="radio"
                name="login-mode"
                value={m}
                checked={mode === m}
                onChange={() => {
                  setMode(m);
                  setSecret('');
                  setError(null);
                }}
              />
              {m === 'password' ? 'Use password' : 'Use API key'}
            </label>
          ))}
        </div>
        <div class="field">
          <label for="login-email">Email</label>
          <input id="login-email" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for={secretId}>{mode === 'password' ? 'Password' : 'API key'}</label>
          <input
            id={secretId}
            type="password"
            autocomplete={mode === 'password' ? 'current-password' : 'off'}
            required
            value={secret}
            onInput={(e) => setSecret(e.currentTarget.value)}
          />
        </div>
        {message && (
          <p class={`alert ${retryAt && !waitSeconds ? 'alert-info' : 'alert-error'}`} role="alert" id="login-error">
            {message}
          </p>
        )}
        <button type="submit" class="button button-wide" disabled={busy || waitSeconds > 0}>
          {busy ? 'Logging in…' : 'Log in'}
        </button>
        <p class="hint">Your key is kept for this tab only: closing it logs you out.</p>
      </form>
    </main>
  );
}
