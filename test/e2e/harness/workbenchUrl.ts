// The URL that opens a folder in code-server's browser workbench and, through the `payload`
// query parameter, optionally runs extension-host tests beside a development extension, exactly
// as `code --extensionDevelopmentPath --extensionTestsPath` would on a desktop (the extension
// under test itself is installed from the .vsix: installedExtension.ts).
// `remote` is the authority code-server gives its own file system.

export interface WorkbenchTarget {
  /** Absolute folder on the server to open. */
  folder: string;
  /** Absolute path of an extension to load unpacked (the host tests' stub runner). */
  extensionDevelopmentPath?: string;
  /** Absolute folder of the compiled extension-host tests module (exports `run()`). */
  extensionTestsPath?: string;
}

const remote = (absPath: string) => `vscode-remote://remote${absPath}`;

export function workbenchUrl(serverUrl: string, target: WorkbenchTarget): string {
  const payload: [string, string][] = [];
  if (target.extensionDevelopmentPath)
    payload.push(['extensionDevelopmentPath', remote(target.extensionDevelopmentPath)]);
  if (target.extensionTestsPath) payload.push(['extensionTestsPath', remote(target.extensionTestsPath)]);
  const query = new URLSearchParams({
    folder: target.folder,
    ...(payload.length > 0 ? { payload: JSON.stringify(payload) } : {}),
  });
  return `${serverUrl}/?${query.toString()}`;
}
