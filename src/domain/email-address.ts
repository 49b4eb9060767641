// What passes for an email address here (Django's validate_email, as Zulip checks them).
import { z } from 'zod';

const emailSchema = z.string().email();

export const isValidEmail = (email: string): boolean => emailSchema.safeParse(email).success;
