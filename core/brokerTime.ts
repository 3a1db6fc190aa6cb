// A broker's timestamp as a message's time. A leaf: every provider's message module
// (core/providers/<provider>/message.ts) and the stream's codec (core/shadowMessage.ts) use it,
// and the codec reaches those modules through the provider table, so it must not live there.

/**
 * A broker's timestamp as a Date, or the receipt time when no Date can hold it (beyond ±8.64e15
 * ms: a timestamp written in the wrong unit, or garbage). The field is informational, and an
 * invalid Date would reach the wire as NaN, which the stream refuses: a timestamp must never make
 * a message undeliverable (docs/design.md §5, "no silent loss"). The broker's own value stays in
 * the message's broker part.
 */
export function brokerTime(ms: number): Date {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? new Date() : date;
}
