// Workspace hints for workload inference: the queueSplit.workload setting, annotated manifests
// in the repo, and the folder names.
import * as vscode from 'vscode';
import { parseWorkloadRef, type WorkloadCandidate } from './model/startSplit';
import { settings } from './settings';

const MAX_FILES = 300;
const MAX_BYTES = 512 * 1024;

export async function workloadCandidates(log: vscode.LogOutputChannel): Promise<WorkloadCandidate[]> {
  // yaml and the declaration schema load with the first command that needs them.
  const { folderCandidate, manifestCandidates, mentionsQueueConfig } = await import('./model/manifests');
  const out: WorkloadCandidate[] = [];
  const setting = settings.workload();
  if (setting !== '') {
    const ref = parseWorkloadRef(setting);
    if ('error' in ref) log.warn(`queueSplit.workload: ${ref.error}`);
    else out.push({ ...ref, from: 'the queueSplit.workload setting', strength: 0 });
  }
  const files = await vscode.workspace.findFiles(
    '**/*.{yaml,yml}',
    '**/{node_modules,.git,dist,out,build,vendor,.venv,target}/**',
    MAX_FILES,
  );
  for (const uri of files) {
    try {
      const stat = await vscode.workspace.fs.stat(uri);
      if (stat.size > MAX_BYTES) continue;
      const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
      if (!mentionsQueueConfig(text)) continue;
      out.push(...manifestCandidates(text, vscode.workspace.asRelativePath(uri)));
    } catch {
      // unreadable file: not a hint
    }
  }
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const candidate = folderCandidate(folder.name);
    if (candidate !== undefined) out.push(candidate);
  }
  return out;
}
