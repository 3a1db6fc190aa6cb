// W3C Baggage (https://www.w3.org/TR/baggage/) as a filter reads it: the members of the `baggage`
// header, keys and values with optional whitespace trimmed, properties after `;` ignored, values
// percent-decoded (invalid UTF-8 becomes U+FFFD, as the spec says). A malformed member is skipped;
// when a key repeats, the last member counts (as OpenTelemetry's propagators read it).

/** Headers longer than this are not baggage a router should parse; their members read as absent. */
export const MAX_BAGGAGE_BYTES = 65536;

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const OWS = /^[ \t]+|[ \t]+$/g;
const BAGGAGE_OCTET = /^[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*$/;

/** member → decoded value. */
export function parseBaggage(header: string): ReadonlyMap<string, string> {
  const members = new Map<string, string>();
  if (header.length > MAX_BAGGAGE_BYTES) return members;
  for (const raw of header.split(',')) {
    const member = raw.split(';')[0]!;
    const eq = member.indexOf('=');
    if (eq < 0) continue;
    const key = member.slice(0, eq).replace(OWS, '');
    const value = member.slice(eq + 1).replace(OWS, '');
    if (!TOKEN.test(key) || !BAGGAGE_OCTET.test(value)) continue;
    members.delete(key); // the last one counts, and keeps its place last
    members.set(key, percentDecode(value));
  }
  return members;
}

/** A header carrying these members, values percent-encoded where baggage-octet does not reach. */
export function formatBaggage(members: Iterable<readonly [string, string]>): string {
  return [...members].map(([key, value]) => `${key}=${percentEncode(value)}`).join(',');
}

function percentDecode(value: string): string {
  if (!value.includes('%')) return value;
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const hex = value.slice(i + 1, i + 3);
    if (value[i] === '%' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(value.charCodeAt(i)); // baggage-octets are ASCII
    }
  }
  return new TextDecoder('utf-8', { fatal: false, ignoreBOM: true }).decode(Uint8Array.from(bytes));
}

function percentEncode(value: string): string {
  let out = '';
  for (const byte of new TextEncoder().encode(value)) {
    const ch = String.fromCharCode(byte);
    out +=
      byte < 0x80 && ch !== '%' && BAGGAGE_OCTET.test(ch)
        ? ch
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
