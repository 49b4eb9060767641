// Logged out: the login form. Logged in: one session (ChatClient) until logout.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Api, describeError, type Credentials } from '../api.ts';
import { ChatClient } from '../client.ts';
import { parseHash } from '../narrow.ts';
import { clearSession, loadSession, saveSession } from '../session.ts';
import { useStore } from '../store.ts';
import { Chat } from './Chat.tsx';
import { Login } from './Login.tsx';

export function Root() {
  const [credentials, setCredentials] = useState<Credentials | null>(loadSession);
  const [notice, setNotice] = useState<string | null>(null);
  if (!credentials) {
    return (
      <Login
        notice={notice}
        onLogin={(c) => {
          saveSession(c);
          setNotice(null);
          setCredentials(c);
        }}
      />
    );
  }
  return (
    <Session
      credentials={credentials}
      onLoggedOut={(reason) => {
        clearSession();
        setNotice(reason);
        setCredentials(null);
      }}
    />
  );
}

function Session({ credentials, onLoggedOut }: { credentials: Credentials; onLoggedOut: (reason: string | null) => void }) {
  const [attempt, setAttempt] = useState(0);
  const client = useMemo(() => new ChatClient(new Api(credentials), onLoggedOut), [credentials, attempt]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setError(null);
    client.start(parseHash(location.hash)).catch((err) => setError(describeError(err)));
    return () => client.stop();
  }, [client]);
  const state = useStore(client.store);
  if (error) {
    return (
      <div class="card boot-error">
        <p role="alert" class="alert alert-error">Could not load the chat: {error}</p>
        <div class="actions">
          <button type="button" class="button" onClick={() => setAttempt((n) => n + 1)}>Try again</button>
          <button type="button" class="button button-secondary" onClick={() => void client.logout()}>Log out</button>
        </div>
      </div>
    );
  }
  if (!state) return <p class="boot" role="status">Loading…</p>;
  return <Chat client={client} state={state} />;
}
