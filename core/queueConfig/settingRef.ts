// Where a container reads a setting the split overrides (docs/design.md, "Queue names in mounted
// files"): an env var, or a key in a file of a ConfigMap volume. Resolution makes one from the
// declaration (sourceEnv or sourceFile, …); the controller overrides it, the status reports it.
import type { ConfigFileFormat } from './configFile';

export interface EnvSettingRef {
  kind: 'env';
  name: string;
}

export interface FileSettingRef {
  kind: 'file';
  /** The file as the container reads it, and the key in it. */
  path: string;
  key: string;
  format: ConfigFileFormat;
  /** The pod volume the file is on, the ConfigMap it names (the original, while split), and the
   * ConfigMap key that is the file. */
  volume: string;
  configMap: string;
  configMapKey: string;
}

export type SettingRef = EnvSettingRef | FileSettingRef;

/** How a message names it: `ORDERS_TOPIC`, `app.orders.topic in /config/application.yml`. */
export function describeSetting(at: SettingRef): string {
  return at.kind === 'env' ? at.name : `${at.key} in ${at.path}`;
}

/** Its identity within one container: two queues must not override the same one. */
export function settingIdentity(at: SettingRef): string {
  return at.kind === 'env' ? `env\u0000${at.name}` : `file\u0000${at.path}\u0000${at.key}`;
}

/** The declaration field that names it: `sourceEnv` or `sourceFile`. */
export function settingField(at: SettingRef, fields: { env: string; file: string }): string {
  return at.kind === 'env' ? fields.env : fields.file;
}
