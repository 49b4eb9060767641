// Channel folders in the channels overlay: `#channels/folders` lists them for administrators, who
// make, rename, describe, archive and restore them; a channel's settings put it in a folder.
import { useState } from 'preact/hooks';
import type { ChatClient } from '../client.ts';
import { createFolder, setChannelFolder, updateFolder } from '../folders.ts';
import type { AppState } from '../state.ts';
import type { Channel, ChannelFolder } from '../types.ts';
import { ErrorLine, useAction } from './Action.tsx';

const byOrder = (a: ChannelFolder, b: ChannelFolder) => a.order - b.order;

export function FolderSettings({ client, state }: { client: ChatClient; state: AppState }) {
  const [draft, setDraft] = useState({ name: '', description: '' });
  const [error, run] = useAction();
  async function submit(e: Event) {
    e.preventDefault();
    if (await run(() => createFolder(client.api, draft.name.trim(), draft.description))) setDraft({ name: '', description: '' });
  }
  return (
    <div class="folder-settings">
      <h2>Channel folders</h2>
      <p class="hint">The left sidebar groups channels by folder, in this order.</p>
      <form class="channel-form" aria-label="Create a folder" onSubmit={submit}>
        <label for="new-folder-name">Name</label>
        <input id="new-folder-name" required value={draft.name} onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} />
        <label for="new-folder-description">Description</label>
        <input id="new-folder-description" value={draft.description} onInput={(e) => setDraft({ ...draft, description: e.currentTarget.value })} />
        <ErrorLine error={error} />
        <div class="actions">
          <button type="submit" class="button button-small">
            Create folder
          </button>
        </div>
      </form>
      {[...state.folders].sort(byOrder).map((f) => (
        <FolderForm key={`${f.id}:${f.name}:${f.description}`} client={client} folder={f} />
      ))}
    </div>
  );
}

function FolderForm({ client, folder }: { client: ChatClient; folder: ChannelFolder }) {
  const [draft, setDraft] = useState({ name: folder.name, description: folder.description });
  const [error, run] = useAction();
  const id = (field: string) => `folder-${field}-${folder.id}`;
  const save = (e: Event) => {
    e.preventDefault();
    const change = {
      ...(draft.name.trim() !== folder.name && { name: draft.name.trim() }),
      ...(draft.description !== folder.description && { description: draft.description }),
    };
    if (Object.keys(change).length) void run(() => updateFolder(client.api, folder.id, change));
  };
  return (
    <form class="channel-form folder" aria-label={`Folder ${folder.name}`} onSubmit={save}>
      <h3>
        {folder.name}
        {folder.is_archived && <span class="hint"> (archived)</span>}
      </h3>
      <label for={id('name')}>Name</label>
      <input id={id('name')} required value={draft.name} onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} />
      <label for={id('description')}>Description</label>
      <input id={id('description')} value={draft.description} onInput={(e) => setDraft({ ...draft, description: e.currentTarget.value })} />
      <ErrorLine error={error} />
      <div class="actions">
        <button type="submit" class="button button-small">
          Save changes
        </button>
        <button
          type="button"
          class="button button-small button-secondary"
          onClick={() => run(() => updateFolder(client.api, folder.id, { is_archived: !folder.is_archived }))}
        >
          {folder.is_archived ? 'Unarchive folder' : 'Archive folder'}
        </button>
      </div>
    </form>
  );
}

/** An administrator's choice of the channel's folder (archived folders are not offered, but kept if the channel is in one). */
export function FolderPicker({ client, state, channel }: { client: ChatClient; state: AppState; channel: Channel }) {
  const [error, run] = useAction();
  const offered = state.folders.filter((f) => !f.is_archived || f.id === channel.folder_id).sort(byOrder);
  const selectId = `channel-folder-${channel.stream_id}`;
  return (
    <div class="channel-fields">
      <label for={selectId}>Folder</label>
      <select
        id={selectId}
        value={channel.folder_id === null ? '' : String(channel.folder_id)}
        onChange={(e) => {
          const value = e.currentTarget.value;
          void run(() => setChannelFolder(client.api, channel.stream_id, value ? Number(value) : null));
        }}
      >
        <option value="">No folder</option>
        {offered.map((f) => (
          <option key={f.id} value={String(f.id)}>
            {f.name}
          </option>
        ))}
      </select>
      <ErrorLine error={error} />
    </div>
  );
}
