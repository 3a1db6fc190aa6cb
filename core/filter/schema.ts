// The stored shapes of a filter, as zod schemas for the documents and resources that carry one.
// Shape only: every reader also runs parseFilter on the raw value (core/filter/parse.ts), which
// checks what a schema cannot (regex dialect, automaton sizes, satisfiability, "__proto__").
import { z } from 'zod';
import {
  MAX_FILTER_CLAUSES,
  MAX_FILTER_KEY_BYTES,
  MAX_FILTER_PAIRS,
  MAX_FILTER_VALUE_LENGTH,
  MAX_IN_VALUES,
  MAX_REGEX_LENGTH,
  type RouteFilter,
} from './model';

const value = () => z.string().max(MAX_FILTER_VALUE_LENGTH);
const values = () => z.array(value()).min(1).max(MAX_IN_VALUES);
const regex = () => z.string().max(MAX_REGEX_LENGTH);

export const predicateSchema = z
  .object({
    equals: value().optional().describe('The value is exactly this.'),
    in: values().optional().describe('The value is one of these.'),
    prefix: value().optional().describe('The value starts with this.'),
    regex: regex()
      .optional()
      .describe('The whole value matches this regex (JavaScript syntax, no back-references or look-around).'),
    exists: z.boolean().optional().describe('true: the key is present; false: it is absent.'),
    notEquals: value().optional().describe('The value is not this (or the key is absent).'),
    notIn: values().optional().describe('The value is none of these (or the key is absent).'),
    notPrefix: value().optional().describe('The value does not start with this (or the key is absent).'),
    notRegex: regex().optional().describe('The value does not match this regex (or the key is absent).'),
  })
  .strict()
  .describe('Predicates on one key, AND-ed.');

export const clauseSchema = z
  .record(z.string().max(MAX_FILTER_KEY_BYTES), predicateSchema)
  .describe('Keys (a header, baggage:<member> or body:$.<path>) to predicates, AND-ed.')
  .meta({ maxProperties: MAX_FILTER_PAIRS });

export const anyOfSchema = z
  .object({
    anyOf: z
      .array(clauseSchema)
      .min(1)
      .max(MAX_FILTER_CLAUSES)
      .describe('A message matches if any clause matches.'),
  })
  .strict();

export const equalityFilterSchema = z.record(z.string().max(MAX_FILTER_KEY_BYTES), value());

/** A stored filter: `{header: value}` (AND of exact values) or `{anyOf: [...]}`. */
// Typed as RouteFilter: zod infers mutable arrays where the filter's type is readonly.
export const routeFilterSchema = z.union([
  equalityFilterSchema,
  anyOfSchema,
]) as unknown as z.ZodType<RouteFilter>;
