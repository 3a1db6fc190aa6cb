// Parses an annotation's YAML without letting the text choose how much work we do. The `yaml`
// package is safe against code execution, but not against resource exhaustion: alias expansion
// ("billion laughs") and deep nesting. Deep nesting overflows the composer's recursion, and in
// Node 20 a later parse in the same process can then die with a fatal (uncatchable) OOM. So
// the text is first parsed to a CST (iterative, cheap), its depth is measured with an explicit
// stack, and only bounded input reaches the recursive composer.
import { Composer, CST, type Document, LineCounter, Parser } from 'yaml';
import { fail, fieldError, ok, type FieldError, type Result } from '../result';

export const MAX_YAML_BYTES = 64 * 1024;
export const MAX_YAML_ALIASES = 64;
export const MAX_YAML_DEPTH = 64;
const MAX_REPORTED = 5;

/** The value of one YAML (or JSON) document, or errors at `path` saying why not. */
export function parseYamlSafely(text: unknown, path = ''): Result<unknown> {
  if (typeof text !== 'string') {
    return fail([
      fieldError(
        path,
        `must be YAML text, got ${text === null ? 'null' : typeof text}.`,
        'Write the value as a YAML string.',
      ),
    ]);
  }
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_YAML_BYTES) {
    return fail([
      fieldError(
        path,
        `is ${bytes} bytes; at most ${MAX_YAML_BYTES} are accepted.`,
        'A queue declaration needs a few hundred bytes: check that the right text was pasted.',
      ),
    ]);
  }
  try {
    return composeBounded(text, path);
  } catch (error) {
    // The yaml package throws for too many aliases; anything else is reported the same way.
    return fail([yamlThrowToError(error, path)]);
  }
}

function composeBounded(text: string, path: string): Result<unknown> {
  const composed = composeDocuments(
    text,
    path,
    'A queue declaration is a few levels deep: check the indentation and brackets.',
  );
  if (!composed.ok) return composed;
  if (composed.value.length > 1) {
    return fail([fieldError(path, 'contains several YAML documents ("---").', 'Keep one document.')]);
  }
  const document = composed.value[0];
  if (document === undefined) return ok(null);
  return ok(document.toJS({ maxAliasCount: MAX_YAML_ALIASES }));
}

/**
 * Every document of `text` with its source ranges, composed only when its nesting is bounded;
 * syntax errors are reported with line and column. The caller bounds the text's size.
 */
export function composeDocuments(text: string, path: string, deepFix: string): Result<Document.Parsed[]> {
  const lines = new LineCounter();
  const tokens = [...new Parser(lines.addNewLine).parse(text)];
  const depth = cstDepth(tokens, MAX_YAML_DEPTH);
  if (depth > MAX_YAML_DEPTH) {
    return fail([fieldError(path, `nests deeper than ${MAX_YAML_DEPTH} levels.`, deepFix)]);
  }
  // Silent: yaml would otherwise print process warnings about what users wrote.
  const composer = new Composer({ uniqueKeys: true, merge: false, prettyErrors: false, logLevel: 'silent' });
  const documents = [...composer.compose(tokens, true, text.length)];
  const errors: FieldError[] = documents
    .flatMap((d) => d.errors)
    .slice(0, MAX_REPORTED)
    .map((error) => {
      const at = lines.linePos(error.pos[0]);
      return fieldError(
        path,
        `is not valid YAML: ${firstLine(error.message)} (line ${at.line}, column ${at.col}).`,
        'Fix the YAML syntax there; indentation must use spaces and every "key:" needs a space after the colon.',
      );
    });
  return errors.length > 0 ? fail(errors) : ok(documents);
}

/** The deepest collection nesting in the CST, counting no further than `limit + 1`. */
function cstDepth(tokens: readonly CST.Token[], limit: number): number {
  const stack: [CST.Token, number][] = tokens.map((token) => [token, 0]);
  let max = 0;
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [token, depth] = next;
    if (depth > max) max = depth;
    if (max > limit) return max;
    switch (token.type) {
      case 'document':
        if (token.value) stack.push([token.value, depth]);
        break;
      case 'block-map':
      case 'block-seq':
      case 'flow-collection':
        for (const item of token.items) {
          if ('key' in item && item.key) stack.push([item.key, depth + 1]);
          if (item.value) stack.push([item.value, depth + 1]);
        }
        break;
      default:
        break;
    }
  }
  return max;
}

function yamlThrowToError(error: unknown, path: string): FieldError {
  const message = error instanceof Error ? error.message : 'unknown error';
  if (/alias/i.test(message)) {
    return fieldError(
      path,
      `expands YAML aliases (*name) more than ${MAX_YAML_ALIASES} times.`,
      'Write the values out instead of using anchors and aliases.',
    );
  }
  return fieldError(path, `could not be read as YAML: ${firstLine(message)}`, 'Simplify the YAML.');
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 197)}...` : line;
}
