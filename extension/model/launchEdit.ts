// "Add Queue Split to Launch Configuration" edits launch.json as text, so the user's comments
// and formatting survive (VS Code's configuration API would rewrite the whole list).
import { LAUNCH_BLOCK_KEY } from './launch';

export interface BlockDefaults {
  workload: string;
  headers: Record<string, string>;
  delivery: 'env' | 'http' | 'relay';
}

export function blockValue(defaults: BlockDefaults): Record<string, unknown> {
  return { workload: defaults.workload, headers: defaults.headers, delivery: defaults.delivery };
}

function indentOf(line: string): string {
  return /^\s*/.exec(line)?.[0] ?? '';
}

export interface TextInsertion {
  /** Offset in the original text. */
  offset: number;
  text: string;
}

/**
 * Where and what to insert so the configuration named `configName` gets a queueSplit block,
 * right after its "name" property. Undefined when the name is not found or the configuration
 * already has a block (callers then fall back or say so).
 */
export function insertBlock(
  launchJson: string,
  configName: string,
  block: Record<string, unknown>,
): TextInsertion | undefined {
  const pattern = new RegExp(`"name"\\s*:\\s*${escapeRegExp(JSON.stringify(configName))}\\s*(,)?`, 'g');
  const match = pattern.exec(launchJson);
  if (match === null) return undefined;
  const objectStart = enclosingObjectStart(launchJson, match.index);
  if (objectStart === undefined) return undefined;
  const objectEnd = matchingBrace(launchJson, objectStart);
  if (
    objectEnd !== undefined &&
    new RegExp(`"${LAUNCH_BLOCK_KEY}"\\s*:`).test(launchJson.slice(objectStart, objectEnd))
  )
    return undefined;
  const lineStart = launchJson.lastIndexOf('\n', match.index) + 1;
  const indent = indentOf(launchJson.slice(lineStart, match.index));
  const body = JSON.stringify(block, null, 2)
    .split('\n')
    .map((line, i) => (i === 0 ? line : `${indent}${line}`))
    .join('\n');
  const hasComma = match[1] !== undefined;
  const end = match.index + match[0].length;
  // After `"name": "x",` → insert `\n<indent>"queueSplit": {...},`; without a comma (last property)
  // → `,\n<indent>"queueSplit": {...}`.
  return hasComma
    ? { offset: end, text: `\n${indent}"${LAUNCH_BLOCK_KEY}": ${body},` }
    : { offset: end, text: `,\n${indent}"${LAUNCH_BLOCK_KEY}": ${body}` };
}

/** A new launch.json with one Node.js configuration carrying the block. */
export function newLaunchJson(block: Record<string, unknown>): string {
  return `${JSON.stringify(
    {
      version: '0.2.0',
      configurations: [
        {
          type: 'node',
          request: 'launch',
          name: 'Debug with Queue Split',
          program: '${workspaceFolder}/index.js',
          [LAUNCH_BLOCK_KEY]: block,
        },
      ],
    },
    null,
    2,
  )}\n`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Index of the `{` of the innermost object containing `index`, skipping strings and comments. */
export function enclosingObjectStart(text: string, index: number): number | undefined {
  const stack: number[] = [];
  for (let i = 0; i < index && i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      if (close < 0) return undefined;
      i = close + 1;
    } else if (c === '{') stack.push(i);
    else if (c === '}') stack.pop();
  }
  return stack[stack.length - 1];
}

/** Index of the `}` closing the `{` at `start`, skipping strings and comments; undefined if unbalanced. */
export function matchingBrace(text: string, start: number): number | undefined {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      if (close < 0) return undefined;
      i = close + 1;
    } else if (c === '{') depth++;
    else if (c === '}') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return undefined;
}
