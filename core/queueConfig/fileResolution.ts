// A setting declared in a mounted file (`sourceFile: {path, key}`) resolved against the pod
// template and the ConfigMaps it mounts (docs/design.md, "Queue names in mounted files"): the
// container's mount that holds the path, the configMap volume behind it, the ConfigMap key that
// is the file, and the key's literal value in it. The caller reads the ConfigMaps (core reads no
// cluster): configMapsToRead() names them.
import { fieldError } from '../result';
import type { FileSettingDecl } from './blocks';
import { findSetting, formatOfPath } from './configFile';
import type { PodTemplateSpec, VolumeMount } from './podTemplate';
import type { ResolveContext } from './resolveContext';
import type { FileSettingRef } from './settingRef';

/** A ConfigMap's data as the API returns it. */
export interface ConfigMapData {
  data?: Readonly<Record<string, string>>;
  binaryData?: Readonly<Record<string, string>>;
}

/** The ConfigMaps a caller read, by name; undefined: it does not exist. */
export type ConfigMapLookup = ReadonlyMap<string, ConfigMapData | undefined>;

/** The ConfigMaps the template's configMap volumes name: what resolving a file setting may read. */
export function configMapVolumeNames(template: PodTemplateSpec | undefined): string[] {
  const names = (template?.spec?.volumes ?? []).flatMap((v) => (v.configMap?.name ? [v.configMap.name] : []));
  return [...new Set(names)];
}

export function resolveFileSetting(
  decl: FileSettingDecl,
  path: string,
  what: string,
  ctx: ResolveContext,
): { at: FileSettingRef; value: string } | undefined {
  const container = ctx.env.container;
  const error = (problem: string, fix: string): undefined => {
    ctx.errors.push(fieldError(path, problem, fix));
    return undefined;
  };
  const mounts = container.volumeMounts ?? [];
  const mount = holdingMount(mounts, decl.path);
  if (!mount) {
    const listed = mounts.map((m) => m.mountPath ?? '?').join(', ') || 'none';
    return error(
      `${decl.path} is not under a volume mount of container "${container.name}" (mounts: ${listed}).`,
      `Give the path the container reads the ${what} file at, under the mountPath of a configMap volume.`,
    );
  }
  if (mount.subPathExpr !== undefined) {
    return error(
      `${decl.path} is on a mount with subPathExpr, whose file depends on the pod.`,
      'Mount the file with subPath or without one, so every pod reads the same file.',
    );
  }
  const volume = ctx.template?.spec?.volumes?.find((v) => v.name === mount.name);
  const configMap = volume?.configMap?.name;
  if (!volume?.configMap || !configMap) {
    const kind = volume ? (Object.keys(volume).find((k) => k !== 'name') ?? 'unknown') : 'missing';
    return error(
      `${decl.path} is on volume "${mount.name}", which is not a configMap volume (it is ${kind}).`,
      `Mount the ${what} file from a configMap volume: the split serves the container a copy of that ConfigMap with the ${what} changed.`,
    );
  }
  const inVolume = pathInVolume(mount, decl.path);
  const items = volume.configMap.items;
  const configMapKey = items ? items.find((i) => i.path === inVolume)?.key : inVolume;
  if (configMapKey === undefined || configMapKey.includes('/')) {
    return error(
      `${decl.path} is not a file of ConfigMap "${configMap}" as volume "${mount.name}" mounts it (it would be "${inVolume}" in the volume${items ? `; its items are ${items.map((i) => i.path).join(', ')}` : ''}).`,
      'Give the path of a file the volume holds: the mountPath and a key of the ConfigMap (or an item path).',
    );
  }
  const format = decl.format ?? formatOfPath(decl.path);
  if (format === undefined) {
    return error(
      `${decl.path} does not say how it is written (no .properties, .yml, .yaml or .json extension).`,
      `Add format: properties, yaml or json next to the path.`,
    );
  }
  if (!ctx.configMaps?.has(configMap)) {
    return error(
      `ConfigMap "${configMap}" (volume "${mount.name}") was not read, so its ${what} cannot be resolved here.`,
      'Allow get on configmaps in the namespace (README, "The developer role"), then look again.',
    );
  }
  const data = ctx.configMaps.get(configMap);
  if (data === undefined) {
    return error(
      `ConfigMap "${configMap}" (volume "${mount.name}") does not exist.`,
      `Create it, or point the volume at the ConfigMap the ${what} file is in.`,
    );
  }
  const text = data.data?.[configMapKey];
  if (text === undefined) {
    return error(
      data.binaryData?.[configMapKey] !== undefined
        ? `ConfigMap "${configMap}" holds ${configMapKey} as binaryData.`
        : `ConfigMap "${configMap}" has no key "${configMapKey}" (the file ${decl.path}).`,
      `Keep the ${what} file as a text key of the ConfigMap (data.${configMapKey}).`,
    );
  }
  const found = findSetting(
    text,
    format,
    decl.key,
    `${decl.path} (ConfigMap "${configMap}", key "${configMapKey}")`,
    path,
  );
  if (!found.ok) {
    ctx.errors.push(...found.errors);
    return undefined;
  }
  return {
    at: { kind: 'file', path: decl.path, key: decl.key, format, volume: mount.name, configMap, configMapKey },
    value: found.value.value,
  };
}

/** The mount whose files include `file`: the deepest mountPath above it, or a file mount of it. */
function holdingMount(mounts: readonly VolumeMount[], file: string): VolumeMount | undefined {
  let best: VolumeMount | undefined;
  for (const m of mounts) {
    const at = (m.mountPath ?? '').replace(/\/+$/, '');
    if (at === '' && m.mountPath !== '/') continue;
    const holds = file === at || file.startsWith(`${at}/`);
    if (holds && (best === undefined || at.length > (best.mountPath ?? '').replace(/\/+$/, '').length))
      best = m;
  }
  return best;
}

/** The file's path inside its volume: below the mount, under the mount's subPath. */
function pathInVolume(mount: VolumeMount, file: string): string {
  const at = (mount.mountPath ?? '').replace(/\/+$/, '');
  const below = file === at ? '' : file.slice(at.length + 1);
  const sub = (mount.subPath ?? '').replace(/^\/+|\/+$/g, '');
  return [sub, below].filter((p) => p !== '').join('/');
}
