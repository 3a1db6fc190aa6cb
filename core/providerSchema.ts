// The provider union as a zod schema, for the documents that carry a provider.
import { z } from 'zod';
import { PROVIDER_NAMES } from './providers';

export const providerSchema = z.enum(PROVIDER_NAMES);
