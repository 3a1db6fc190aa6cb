// Rewrites zod's OpenAPI 3.0 output into a Kubernetes *structural* schema: apiextensions v1
// rejects `additionalProperties: false` next to `properties`, has no `propertyNames`, `const`
// or `$schema`, and validates `format: date-time` itself (zod's long pattern is dropped).
export type JsonSchema = { [key: string]: unknown };

const SAFE_INTEGER = 9007199254740991;

export function toStructuralSchema(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$schema' || key === 'propertyNames' || key === '$id') continue;
    if (key === 'additionalProperties' && value === false) continue;
    if (key === 'pattern' && schema.format === 'date-time') continue;
    // zod bounds every int by the safe range; Kubernetes needs no such noise.
    if ((key === 'maximum' && value === SAFE_INTEGER) || (key === 'minimum' && value === -SAFE_INTEGER))
      continue;
    if (key === 'const') {
      out.enum = [value];
      continue;
    }
    out[key] = convert(key, value);
  }
  return out;
}

function convert(key: string, value: unknown): unknown {
  if (key === 'properties' && isObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([name, child]) => [
        name,
        isObject(child) ? toStructuralSchema(child) : child,
      ]),
    );
  }
  if ((key === 'items' || key === 'additionalProperties') && isObject(value))
    return toStructuralSchema(value);
  if ((key === 'anyOf' || key === 'oneOf' || key === 'allOf') && Array.isArray(value)) {
    return value.map((child: unknown) => (isObject(child) ? toStructuralSchema(child) : child));
  }
  return value;
}

function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
