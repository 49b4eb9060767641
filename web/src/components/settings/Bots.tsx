// Zulip's "Bots" tab of personal settings: the bots one administers, active and deactivated, each
// with its type, address, API key (shown when asked) and zuliprc; a form to create one (generic,
// incoming webhook, outgoing webhook with its payload URL and interface); renaming, a new owner,
// an avatar, deactivating and reactivating. The list is the state's, kept by realm_bot events.
import { useState } from 'preact/hooks';
import { BOT_TYPE_NAMES, BOT_TYPES, INTERFACE_NAMES, createBot, setBotActive, updateBot, uploadBotAvatar, zuliprc, type Bot } from '../../bots.ts';
import type { ChatClient } from '../../client.ts';
import type { AppState } from '../../state.ts';
import { Outcome, useSave } from './SaveOutcome.tsx';

type Save = ReturnType<typeof useSave>[1];

export function Bots({ client, state }: { client: ChatClient; state: AppState }) {
  const [outcome, save] = useSave();
  const mine = [...state.bots.values()].filter((b) => b.owner_id === state.me.userId).sort((a, b) => a.full_name.localeCompare(b.full_name));
  const active = mine.filter((b) => b.is_active);
  const deactivated = mine.filter((b) => !b.is_active);
  return (
    <>
      <NewBotForm client={client} save={save} />
      <Outcome outcome={outcome} />
      <h2>Active bots</h2>
      {active.length ? (
        <ul class="bot-list" aria-label="Active bots">
          {active.map((b) => (
            <BotItem key={b.user_id} bot={b} client={client} state={state} save={save} />
          ))}
        </ul>
      ) : (
        <p>You have no active bots.</p>
      )}
      {deactivated.length > 0 && (
        <>
          <h2>Deactivated bots</h2>
          <ul class="bot-list" aria-label="Deactivated bots">
            {deactivated.map((b) => (
              <BotItem key={b.user_id} bot={b} client={client} state={state} save={save} />
            ))}
          </ul>
        </>
      )}
    </>
  );
}

function NewBotForm({ client, save }: { client: ChatClient; save: Save }) {
  const empty = { full_name: '', short_name: '', bot_type: BOT_TYPES.GENERIC as number, payload_url: '', interface_type: 1 };
  const [bot, setBot] = useState(empty);
  const outgoing = bot.bot_type === BOT_TYPES.OUTGOING_WEBHOOK;
  const submit = (e: Event) => {
    e.preventDefault();
    void save(async () => {
      await createBot(client.api, { ...bot, full_name: bot.full_name.trim(), short_name: bot.short_name.trim() });
      setBot(empty);
    });
  };
  return (
    <form class="channel-form" aria-label="Add a new bot" onSubmit={submit}>
      <label for="bot-type">Bot type</label>
      <select id="bot-type" value={String(bot.bot_type)} onChange={(e) => setBot({ ...bot, bot_type: Number(e.currentTarget.value) })}>
        {Object.values(BOT_TYPES).map((t) => (
          <option key={t} value={String(t)}>
            {BOT_TYPE_NAMES[t]}
          </option>
        ))}
      </select>
      <label for="bot-name">Name</label>
      <input id="bot-name" required maxLength={100} value={bot.full_name} onInput={(e) => setBot({ ...bot, full_name: e.currentTarget.value })} />
      <label for="bot-short-name">Bot email (the part before -bot@)</label>
      <input id="bot-short-name" required value={bot.short_name} onInput={(e) => setBot({ ...bot, short_name: e.currentTarget.value })} />
      {outgoing && (
        <>
          <label for="bot-payload-url">Endpoint URL</label>
          <input id="bot-payload-url" type="url" required value={bot.payload_url} onInput={(e) => setBot({ ...bot, payload_url: e.currentTarget.value })} />
          <label for="bot-interface">Outgoing webhook message format</label>
          <select id="bot-interface" value={String(bot.interface_type)} onChange={(e) => setBot({ ...bot, interface_type: Number(e.currentTarget.value) })}>
            {Object.entries(INTERFACE_NAMES).map(([value, name]) => (
              <option key={value} value={value}>
                {name}
              </option>
            ))}
          </select>
        </>
      )}
      <button type="submit" class="button button-small">
        Create bot
      </button>
    </form>
  );
}

function BotItem({ bot, client, state, save }: { bot: Bot; client: ChatClient; state: AppState; save: Save }) {
  const [showKey, setShowKey] = useState(false);
  const [name, setName] = useState(bot.full_name);
  const people = [...state.users.values()].filter((u) => u.is_active && !u.is_bot).sort((a, b) => a.full_name.localeCompare(b.full_name));
  const service = bot.services[0];
  return (
    <li class="bot" aria-label={bot.full_name}>
      <img class="avatar" src={bot.avatar_url} alt="" width={40} height={40} />
      <strong class="bot-name">{bot.full_name}</strong> <span class="bot-type">{BOT_TYPE_NAMES[bot.bot_type ?? BOT_TYPES.GENERIC]}</span>
      <div class="bot-email">{bot.email}</div>
      {service && (
        <div class="bot-service">
          Endpoint: {service.base_url} ({INTERFACE_NAMES[service.interface]})
        </div>
      )}
      {showKey ? (
        <code class="bot-api-key">{bot.api_key}</code>
      ) : (
        <button type="button" class="button button-small button-secondary" onClick={() => setShowKey(true)}>
          Show API key
        </button>
      )}
      <a
        class="button button-small button-secondary"
        download="zuliprc"
        href={`data:text/plain;charset=utf-8,${encodeURIComponent(zuliprc(bot, location.origin))}`}
      >
        Download zuliprc
      </a>
      {bot.is_active ? (
        <>
          <form
            class="channel-form"
            aria-label={`Edit ${bot.full_name}`}
            onSubmit={(e) => (e.preventDefault(), save(() => updateBot(client.api, bot.user_id, { full_name: name.trim() })))}
          >
            <label for={`bot-${bot.user_id}-name`}>Bot name</label>
            <input id={`bot-${bot.user_id}-name`} required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
            <button type="submit" class="button button-small" disabled={!name.trim() || name.trim() === bot.full_name}>
              Rename
            </button>
            <label for={`bot-${bot.user_id}-owner`}>Owner</label>
            <select
              id={`bot-${bot.user_id}-owner`}
              value={String(bot.owner_id)}
              onChange={(e) => save(() => updateBot(client.api, bot.user_id, { bot_owner_id: Number(e.currentTarget.value) }))}
            >
              {people.map((u) => (
                <option key={u.user_id} value={String(u.user_id)}>
                  {u.full_name}
                </option>
              ))}
            </select>
            <label for={`bot-${bot.user_id}-avatar`}>Upload a new avatar</label>
            <input
              id={`bot-${bot.user_id}-avatar`}
              type="file"
              accept="image/*"
              onChange={(e) => {
                const file = e.currentTarget.files?.[0];
                if (file) void save(() => uploadBotAvatar(client.api, bot.user_id, file));
              }}
            />
          </form>
          <button type="button" class="button button-small button-secondary" onClick={() => save(() => setBotActive(client.api, bot.user_id, false))}>
            Deactivate
          </button>
        </>
      ) : (
        <button type="button" class="button button-small" onClick={() => save(() => setBotActive(client.api, bot.user_id, true))}>
          Reactivate
        </button>
      )}
    </li>
  );
}
