// Logged out: the login form. Logged in (by that form, or by the server's pages, whose session
// cookie is found at start): one session (ChatClient) until logout.
import { useEffect, useLayoutEffect, useMemo, useState } from 'preact/hooks';
import { Api, describeError, request, type Auth } from '../api.ts';
import { ChatClient } from '../client.ts';
import { parseHash } from '../narrow.ts';
import { clearSession, loadSession, saveSession } from '../session.ts';
import { useStore } from '../store.ts';
import { Chat } from './Chat.tsx';
import { Login } from './Login.tsx';

export function Root() {
  // undefined while asking whether the browser has a session cookie.
  const [auth, setAuth] = useState<Auth | null | undefined>(() => loadSession() ?? undefined);
  const [notice, setNotice] = useState<string | null>(null);
  useEffect(() => {
    if (auth === undefined)
      request('GET', '/users/me', {}, 'session').then(
        () => setAuth('session'),
        () => setAuth(null),
      );
  }, []);
  if (auth === undefined)
    return (
      <p class="boot" role="status">
        Loading…
      </p>
    );
  if (!auth) {
    return (
      <Login
        notice={notice}
        onLogin={(c) => {
          saveSession(c);
          setNotice(null);
          setAuth(c);
        }}
      />
    );
  }
  return (
    <Session
      auth={auth}
      onLoggedOut={(reason) => {
        clearSession();
        setNotice(reason);
        setAuth(null);
      }}
    />
  );
}

function Session({ auth, onLoggedOut }: { auth: Auth; onLoggedOut: (reason: string | null) => void }) {
  const [attempt, setAttempt] = useState(0);
  const client = useMemo(() => new ChatClient(new Api(auth), onLoggedOut), [auth, attempt]);
  const [error, setError] = useState<string | null>(null);
  // Started as soon as the session is on the page, not after the next paint (as useEffect would):
  // the register request goes out in the same task as the login's answer.
  useLayoutEffect(() => {
    setError(null);
    client.start(parseHash(location.hash)).catch((err) => setError(describeError(err)));
    return () => client.stop();
  }, [client]);
  const state = useStore(client.store);
  if (error) {
    return (
      <div class="card boot-error">
        <p role="alert" class="alert alert-error">
          Could not load the chat: {error}
        </p>
        <div class="actions">
          <button type="button" class="button" onClick={() => setAttempt((n) => n + 1)}>
            Try again
          </button>
          <button type="button" class="button button-secondary" onClick={() => void client.logout()}>
            Log out
          </button>
        </div>
      </div>
    );
  }
  if (!state)
    return (
      <p class="boot" role="status">
        Loading…
      </p>
    );
  return <Chat client={client} state={state} />;
}
