// Builds the `queues[1].kafka.groupEnv` paths used in FieldError.path. Keys that are not plain
// identifiers are quoted (`filter["x-user"]`) so a path is never ambiguous.

export type PathSegment = string | number;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export function joinPath(base: string, segment: PathSegment): string {
  if (typeof segment === 'number') return `${base}[${segment}]`;
  if (IDENTIFIER.test(segment)) return base === '' ? segment : `${base}.${segment}`;
  return `${base}[${JSON.stringify(segment)}]`;
}

export function pathOf(segments: readonly PathSegment[], base = ''): string {
  return segments.reduce<string>((path, segment) => joinPath(path, segment), base);
}
