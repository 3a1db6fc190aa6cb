// Turns zod issues into FieldErrors a person can act on: the path in the user's terms, what is
// wrong in words, and a fix (the allowed keys with a "did you mean", the allowed values, the
// field's own description when it is missing). Shared by every zod-validated document in core/.
import { z } from 'zod';
import { pathOf, type PathSegment } from './fieldPath';
import { fieldError, type FieldError } from './result';
import { closestMatch } from './suggest';

export interface PatternHint {
  regex: RegExp;
  what: string;
  fix: string;
  /** Field names the hint is for, when several fields share one pattern. */
  fields?: readonly string[];
}

/** Converts every issue; `root` is the schema that was parsed, `input` the value it was given. */
export function issuesToFieldErrors(
  issues: readonly z.core.$ZodIssue[],
  root: z.ZodType,
  input: unknown,
  basePath = '',
  patterns: readonly PatternHint[] = [],
): FieldError[] {
  return issues.flatMap((issue) => issueToFieldErrors(issue, root, input, basePath, patterns));
}

function issueToFieldErrors(
  issue: z.core.$ZodIssue,
  root: z.ZodType,
  input: unknown,
  basePath: string,
  patterns: readonly PatternHint[],
): FieldError[] {
  const segments = issue.path.filter((s): s is PathSegment => typeof s !== 'symbol');
  const path = pathOf(segments, basePath);
  const value = valueAt(input, segments);
  const field = String(segments[segments.length - 1] ?? 'value');
  switch (issue.code) {
    case 'unrecognized_keys': {
      const allowed = objectKeysAt(root, segments);
      return issue.keys.map((key) => {
        const guess = closestMatch(key, allowed);
        const list = allowed.length > 0 ? ` Allowed here: ${allowed.join(', ')}.` : '';
        return fieldError(
          pathOf([...segments, key], basePath),
          `unknown key ${JSON.stringify(key)}.`,
          guess ? `Did you mean ${JSON.stringify(guess)}?${list}` : `Remove it.${list}`,
        );
      });
    }
    case 'invalid_type': {
      if (value === undefined) {
        const about = describedAt(root, segments);
        return [
          fieldError(
            path,
            'is required.',
            `Add ${field}: <${expectedWord(issue.expected)}>.${about ? ` ${about}` : ''}`,
          ),
        ];
      }
      return [
        fieldError(
          path,
          `must be ${expectedWord(issue.expected)}, got ${describeValue(value)}.`,
          typeFix(issue.expected, field, value),
        ),
      ];
    }
    case 'invalid_value': {
      const allowed = issue.values.map((v) => String(v));
      if (value === undefined) {
        const about = describedAt(root, segments);
        return [
          fieldError(
            path,
            'is required.',
            `Add ${field}: <one of ${allowed.join(', ')}>.${about ? ` ${about}` : ''}`,
          ),
        ];
      }
      const guess = typeof value === 'string' ? closestMatch(value, allowed) : undefined;
      return [
        fieldError(
          path,
          `must be one of ${allowed.join(', ')}; got ${describeValue(value)}.`,
          guess ? `Did you mean ${guess}?` : `Use one of: ${allowed.join(', ')}.`,
        ),
      ];
    }
    case 'invalid_format': {
      const pattern = 'pattern' in issue ? issue.pattern : undefined;
      const hint = patterns.find(
        (p) => String(p.regex) === pattern && (p.fields === undefined || p.fields.includes(field)),
      );
      return [
        fieldError(
          path,
          `${describeValue(value)} is not ${hint?.what ?? `a valid ${issue.format}`}.`,
          hint?.fix ?? issue.message,
        ),
      ];
    }
    case 'too_small':
      return [tooSmall(path, issue.origin, Number(issue.minimum), field)];
    case 'too_big':
      return [tooBig(path, issue.origin, Number(issue.maximum))];
    case 'custom': {
      const fix =
        typeof issue.params?.fix === 'string' ? issue.params.fix : 'See the schema for what is allowed.';
      return [fieldError(path, issue.message, fix)];
    }
    default:
      return [fieldError(path, `${issue.message}.`, 'See the schema for what is allowed here.')];
  }
}

function tooSmall(path: string, origin: string, minimum: number, field: string): FieldError {
  if (origin === 'string') {
    return minimum <= 1
      ? fieldError(path, 'must not be empty.', `Give ${field} a value.`)
      : fieldError(path, `must be at least ${minimum} characters long.`, 'Use a longer value.');
  }
  if (origin === 'array') {
    return fieldError(
      path,
      `needs at least ${minimum} ${minimum === 1 ? 'entry' : 'entries'}.`,
      'Add the missing entries.',
    );
  }
  return fieldError(path, `must be at least ${minimum}.`, `Use a value of ${minimum} or more.`);
}

function tooBig(path: string, origin: string, maximum: number): FieldError {
  if (origin === 'string') {
    return fieldError(path, `is longer than ${maximum} characters.`, 'Use a shorter value.');
  }
  if (origin === 'array') {
    return fieldError(path, `has more than ${maximum} entries.`, `Keep at most ${maximum}.`);
  }
  return fieldError(path, `must be at most ${maximum}.`, `Use a value of ${maximum} or less.`);
}

function expectedWord(expected: string): string {
  switch (expected) {
    case 'object':
    case 'record':
      return 'a map';
    case 'array':
      return 'a list';
    case 'int':
      return 'a whole number';
    default:
      return `a ${expected}`;
  }
}

function typeFix(expected: string, field: string, value: unknown): string {
  if (expected === 'string' && (typeof value === 'number' || typeof value === 'boolean')) {
    return `Quote it: ${field}: "${String(value)}".`;
  }
  if (expected === 'object' || expected === 'record') return `Write ${field} as a map of key: value lines.`;
  if (expected === 'array') return `Write ${field} as a list ("- item" lines).`;
  return `Write ${field} as ${expectedWord(expected)}.`;
}

export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  if (typeof value === 'string')
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  if (typeof value === 'function') return 'a function';
  return `${typeof value} ${String(value)}`;
}

/** The input's value at a path, following own properties only. */
function valueAt(input: unknown, segments: readonly PathSegment[]): unknown {
  let current: unknown = input;
  for (const segment of segments) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<PathSegment, unknown>)[segment];
  }
  return current;
}

/** The schema at a path, looking through optional/nullable/default wrappers, arrays and unions. */
function schemaAt(root: z.ZodType, segments: readonly PathSegment[]): z.ZodType | undefined {
  let candidates: z.ZodType[] = [root];
  for (const segment of segments) {
    candidates = candidates.flatMap((schema) => childSchemas(unwrap(schema), segment));
    if (candidates.length === 0) return undefined;
  }
  return candidates[0];
}

function childSchemas(schema: z.ZodType, segment: PathSegment): z.ZodType[] {
  if (schema instanceof z.ZodUnion) {
    return (schema.options as readonly z.ZodType[]).flatMap((option) =>
      childSchemas(unwrap(option), segment),
    );
  }
  if (schema instanceof z.ZodObject && typeof segment === 'string') {
    const child = (schema.shape as Record<string, z.ZodType | undefined>)[segment];
    return child ? [child] : [];
  }
  if (schema instanceof z.ZodArray && typeof segment === 'number') return [schema.element as z.ZodType];
  if (schema instanceof z.ZodRecord && typeof segment === 'string') return [schema.valueType as z.ZodType];
  return [];
}

function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (let i = 0; i < 8; i++) {
    if (
      current instanceof z.ZodOptional ||
      current instanceof z.ZodNullable ||
      current instanceof z.ZodDefault
    ) {
      current = current.unwrap() as z.ZodType;
    } else {
      break;
    }
  }
  return current;
}

function objectKeysAt(root: z.ZodType, segments: readonly PathSegment[]): string[] {
  const schema = schemaAt(root, segments);
  const object = schema && unwrap(schema);
  if (object instanceof z.ZodUnion) {
    const keys = (object.options as readonly z.ZodType[]).flatMap((option) => {
      const inner = unwrap(option);
      return inner instanceof z.ZodObject ? Object.keys(inner.shape) : [];
    });
    return [...new Set(keys)];
  }
  return object instanceof z.ZodObject ? Object.keys(object.shape) : [];
}

function describedAt(root: z.ZodType, segments: readonly PathSegment[]): string | undefined {
  const schema = schemaAt(root, segments);
  return schema?.description ?? (schema ? unwrap(schema).description : undefined);
}
