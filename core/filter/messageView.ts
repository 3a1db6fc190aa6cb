// A message as filters read it: its headers, and — parsed at most once, and only if some filter
// asks — its baggage members and its JSON body. One view serves every route a message is tested
// against.
import { parseBaggage } from './baggage';
import { bodyField, readBody } from './body';
import { BAGGAGE_HEADER, type FilterKey } from './keys';
import type { MessageHeaders } from './model';

const UNREAD = Symbol('unread');

export class MessageView {
  private baggage: ReadonlyMap<string, string> | undefined;
  private parsedBody: unknown = UNREAD;

  constructor(
    readonly headers: MessageHeaders,
    private readonly body?: Uint8Array | string,
  ) {}

  /** The key's value as text, or undefined when absent or not text. */
  value(key: FilterKey): string | undefined {
    switch (key.kind) {
      case 'header':
        return this.headers.get(key.name);
      case 'baggage':
        this.baggage ??= parseBaggage(this.headers.get(BAGGAGE_HEADER) ?? '');
        return this.baggage.get(key.member);
      case 'body': {
        const parsed = this.json();
        return parsed === undefined ? undefined : bodyField(parsed, key.path);
      }
    }
  }

  /** Whether the body is JSON within the parse bounds; if not, no body predicate is satisfied. */
  bodyReadable(): boolean {
    return this.json() !== undefined;
  }

  private json(): unknown {
    if (this.parsedBody === UNREAD) this.parsedBody = readBody(this.body);
    return this.parsedBody;
  }
}

/** A view of headers alone (a message whose body no filter may read). */
export function headersView(headers: MessageHeaders): MessageView {
  return new MessageView(headers);
}
