// A setting the split overrides, resolved from whichever of its two fields the block uses: an
// env var (envResolution.ts) or a key of a mounted file (fileResolution.ts).
import type { FileSettingDecl } from './blocks';
import { literal } from './envResolution';
import { resolveFileSetting } from './fileResolution';
import type { ResolveContext } from './resolveContext';
import type { SettingRef } from './settingRef';

/** The setting's place and literal value; errors go to ctx.errors under `${base}.<field>`. */
export function literalSetting(
  env: string | undefined,
  file: FileSettingDecl | undefined,
  fields: { env: string; file: string },
  base: string,
  what: string,
  ctx: ResolveContext,
): { at: SettingRef; value: string } | undefined {
  if (file !== undefined) return resolveFileSetting(file, `${base}.${fields.file}`, what, ctx);
  // The schema stage made sure one of the two is set.
  if (env === undefined) return undefined;
  const value = literal(env, `${base}.${fields.env}`, what, ctx);
  return value === undefined ? undefined : { at: { kind: 'env', name: env }, value };
}
