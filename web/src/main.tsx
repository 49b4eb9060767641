// The web client: a Zulip-API client in the browser, served by the chat server at `/`.
import { render } from 'preact';
import { Root } from './components/Root.tsx';
import '../styles/app.css';

const root = document.getElementById('root')!;
// The page's "Loading…" placeholder goes: Preact adds to what a container holds.
root.replaceChildren();
render(<Root />, root);
