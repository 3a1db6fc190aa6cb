// Writes the generated deploy/ files: `npx tsx core/generate.ts`. The only file in core/ that
// does I/O. JSON goes through prettier so `npm run lint` accepts it as written.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as prettier from 'prettier';
import { generatedArtifacts } from './artifacts';

async function main(): Promise<void> {
  const root = path.resolve(__dirname, '..');
  for (const artifact of generatedArtifacts()) {
    const file = path.join(root, artifact.path);
    const options = (await prettier.resolveConfig(file)) ?? {};
    const content = artifact.path.endsWith('.json')
      ? await prettier.format(artifact.content, { ...options, filepath: file })
      : artifact.content;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
    console.log(`wrote ${artifact.path}`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
