// A translation for tests: l10n/bundle.l10n.json with every English text upper-cased and its {0}
// placeholders kept, configured into @vscode/l10n on import. A text that went through l10n comes
// out upper-case; English written around it stays lower-case, so a test can find it. Import it
// before the modules under test: some word their tables when they load.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';

const bundle = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', '..', '..', 'l10n', 'bundle.l10n.json'), 'utf8'),
) as Record<string, string | { message: string }>;

/** `text` "translated": upper-case outside its placeholders. */
export function shout(text: string): string {
  return text
    .split(/(\{\d+\})/)
    .map((part, i) => (i % 2 ? part : part.toUpperCase()))
    .join('');
}

l10n.config({
  contents: Object.fromEntries(
    Object.entries(bundle).map(([key, value]) => [
      key,
      shout(typeof value === 'string' ? value : value.message),
    ]),
  ),
});
