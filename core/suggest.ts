// "Did you mean …?" for typos in keys and enum values: strict schemas reject unknown keys, and
// the rejection is only friendly if it names the key the user meant.

/** Edit distance, capped: anything farther than `limit` is reported as `limit + 1`. */
function distance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((current[j - 1] ?? 0) + 1, (previous[j] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? limit + 1;
}

/** The candidate closest to `input` (case-insensitive), if it is plausibly a typo of it. */
export function closestMatch(input: string, candidates: readonly string[]): string | undefined {
  if (input.length > 64) return undefined;
  const needle = input.toLowerCase();
  // A clear abbreviation ("rabbit" for "rabbitmq") counts as a typo too.
  const prefixed =
    needle.length >= 3 ? candidates.find((c) => c.toLowerCase().startsWith(needle)) : undefined;
  if (prefixed) return prefixed;
  const limit = Math.max(1, Math.floor(needle.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of candidates) {
    const d = distance(needle, candidate.toLowerCase(), limit);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}
