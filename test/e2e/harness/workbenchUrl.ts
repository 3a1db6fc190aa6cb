// The URL that opens a folder in code-server's browser workbench and, through the `payload`
// query parameter, loads the extension unpacked from this checkout (and optionally runs
// extension-host tests), exactly as `code --extensionDevelopmentPath` would on a desktop.
// `remote` is the authority code-server gives its own file system.

export interface WorkbenchTarget {
  /** Absolute folder on the server to open. */
  folder: string;
  /** Absolute path of the extension to load unpacked (the repository root). */
  extensionDevelopmentPath: string;
  /** Absolute folder of the compiled extension-host tests module (exports `run()`). */
  extensionTestsPath?: string;
}

const remote = (absPath: string) => `vscode-remote://remote${absPath}`;

export function workbenchUrl(serverUrl: string, target: WorkbenchTarget): string {
  const payload: [string, string][] = [['extensionDevelopmentPath', remote(target.extensionDevelopmentPath)]];
  if (target.extensionTestsPath) payload.push(['extensionTestsPath', remote(target.extensionTestsPath)]);
  const query = new URLSearchParams({ folder: target.folder, payload: JSON.stringify(payload) });
  return `${serverUrl}/?${query.toString()}`;
}
