// Custom profile fields as the API shows them (Zulip's CustomProfileField.as_dict), in display order.
import type { App } from '../app.ts';
import type { CustomProfileField } from '../db/generated/client.ts';
import type { z } from 'zod';
import type { profileField } from '../events/schemas.ts';

export function formatField(f: CustomProfileField): z.infer<typeof profileField> {
  return {
    id: f.id,
    name: f.name,
    type: f.fieldType,
    hint: f.hint,
    field_data: f.fieldData,
    order: f.order,
    required: f.required,
    editable_by_user: f.editableByUser,
    // Zulip leaves the key out when it is false.
    ...(f.displayInProfileSummary ? { display_in_profile_summary: true } : {}),
  };
}

export async function profileFields(app: App, realmId: number): Promise<z.infer<typeof profileField>[]> {
  const fields = await app.prisma.customProfileField.findMany({ where: { realmId }, orderBy: [{ order: 'asc' }, { id: 'asc' }] });
  return fields.map(formatField);
}
