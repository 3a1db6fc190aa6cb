// What went wrong when a Kubernetes API call failed, from the error @kubernetes/client-node 1.x
// raises, before anybody words it: the extension (extension/kube/errors.ts) and the sidecar
// (laptop/kube.ts) each say it in their own terms. Pure: no client import, no I/O.
//
// How the client surfaces each failure (node_modules/@kubernetes/client-node/dist):
// - no connection: node-fetch's FetchError, `code` a system code (ECONNREFUSED, ENOTFOUND,
//   ETIMEDOUT, ...);
// - TLS: the same FetchError, `code` OpenSSL's verdict (UNABLE_TO_VERIFY_LEAF_SIGNATURE,
//   ERR_TLS_CERT_ALTNAME_INVALID, CERT_HAS_EXPIRED, ...; EPROTO when https meets plain http);
// - an HTTP status: ApiException, `code` the number, `body` the Status JSON;
// - an exec credential plugin (users[].user.exec) that is not there: exec_auth.js rejects with
//   spawn's own error, `code` ENOENT and `syscall` "spawn <command>";
// - a plugin that exits non-zero: `new Error(<its whole stderr>)`, no code at all; one that
//   prints no JSON: the SyntaxError of JSON.parse.

/** users[].user.exec of the kubeconfig's current user (client-node's ExecConfig, loosely). */
export interface ExecCredentialConfig {
  command?: string;
  args?: readonly string[] | null;
  env?: readonly { name: string; value: string }[] | null;
}

export type KubeFailure =
  /** No answer: nothing listens, no route, no DNS name, a timeout. `code` e.g. ECONNREFUSED. */
  | { kind: 'unreachable'; code: string }
  /** The connection's TLS failed: the server's certificate is not trusted or not for its name. */
  | { kind: 'tls'; code: string; reason: string }
  /** The kubeconfig's credential plugin is not on the PATH (or cannot be run). */
  | { kind: 'exec-missing'; command: string; plugin: CredentialPlugin; notExecutable: boolean }
  /** The credential plugin ran and failed; `firstLine` is its stderr's first line, redacted. */
  | { kind: 'exec-failed'; command: string; plugin: CredentialPlugin; firstLine: string }
  /** The API server answered with an HTTP status (401, 403, 404, 409, ...). */
  | { kind: 'status'; status: number; message?: string }
  /** Anything else (a bug, an unexpected client error): its first line. */
  | { kind: 'other'; text: string };

/** What is known about a credential plugin: what installs it and how one logs in again. */
export interface CredentialPlugin {
  /** The command's file name, e.g. `gke-gcloud-auth-plugin`. */
  binary: string;
  /** What installs it, in words; undefined for a plugin this table does not know. */
  installedBy?: string;
  /** The login that renews what the plugin hands out, e.g. `gcloud auth login`. */
  login?: string;
}

const PLUGINS: Record<string, { installedBy: string; login?: (exec: ExecCredentialConfig) => string }> = {
  'gke-gcloud-auth-plugin': {
    installedBy: 'the Google Cloud CLI: `gcloud components install gke-gcloud-auth-plugin`',
    login: () => 'gcloud auth login',
  },
  gcloud: { installedBy: 'the Google Cloud CLI (cloud.google.com/sdk)', login: () => 'gcloud auth login' },
  aws: {
    installedBy: 'the AWS CLI v2 (aws.amazon.com/cli)',
    login: (exec) => `aws sso login${awsProfile(exec) !== undefined ? ` --profile ${awsProfile(exec)}` : ''}`,
  },
  'aws-iam-authenticator': {
    installedBy: 'aws-iam-authenticator (github.com/kubernetes-sigs/aws-iam-authenticator)',
    login: (exec) => `aws sso login${awsProfile(exec) !== undefined ? ` --profile ${awsProfile(exec)}` : ''}`,
  },
  kubelogin: {
    installedBy: 'Azure kubelogin: `az aks install-cli` (or your package manager)',
    login: () => 'az login',
  },
  az: { installedBy: 'the Azure CLI (learn.microsoft.com/cli/azure)', login: () => 'az login' },
  'kubectl-oidc_login': {
    installedBy: 'the kubectl oidc-login plugin: `kubectl krew install oidc-login`',
  },
  doctl: { installedBy: 'doctl, the DigitalOcean CLI', login: () => 'doctl auth init' },
  tsh: { installedBy: 'Teleport’s tsh', login: () => 'tsh login' },
  oci: { installedBy: 'the OCI CLI', login: () => 'oci session authenticate' },
};

function awsProfile(exec: ExecCredentialConfig): string | undefined {
  const args = exec.args ?? [];
  const i = args.indexOf('--profile');
  const fromArgs = i >= 0 ? args[i + 1] : undefined;
  const fromEnv = (exec.env ?? []).find((e) => e.name === 'AWS_PROFILE')?.value;
  const profile = fromArgs ?? fromEnv;
  // Only a plain name goes into a command the user may paste.
  return profile !== undefined && /^[\w.@-]+$/.test(profile) ? profile : undefined;
}

/** The plugin of `command` (a path or a bare name), with what is known about it. */
export function credentialPlugin(command: string, exec: ExecCredentialConfig = {}): CredentialPlugin {
  const binary =
    command
      .split(/[\\/]/)
      .pop()
      ?.replace(/\.(exe|cmd|bat)$/i, '') || command;
  // `kubectl oidc-login get-token`: the plugin is kubectl's.
  const key = binary === 'kubectl' && (exec.args ?? [])[0] === 'oidc-login' ? 'kubectl-oidc_login' : binary;
  const known = PLUGINS[key];
  const login = known?.login?.(exec);
  return {
    binary: key === 'kubectl-oidc_login' ? 'kubectl oidc-login' : binary,
    ...(known !== undefined ? { installedBy: known.installedBy } : {}),
    ...(login !== undefined ? { login } : {}),
  };
}

const MASK = '***';

/**
 * A credential plugin's text made safe to show: bearer tokens, JWTs, `token=`/`password:`-style
 * values and long opaque strings are masked, whitespace is folded, and it is cut to `max`.
 */
export function redactCredentials(text: string, max = 200): string {
  let out = text
    .replace(/\beyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]*/g, MASK)
    .replace(/\b(bearer|basic)\s+[\w.~+/=-]{8,}/gi, `$1 ${MASK}`)
    .replace(
      /\b((?:access[_-]?|id[_-]?|refresh[_-]?|session[_-]?)?(?:token|secret|password|passwd|pwd|key|credential)s?)(["']?\s*[=:]\s*["']?)[^\s"',;)]+/gi,
      `$1$2${MASK}`,
    )
    .replace(/[A-Za-z0-9+/_=-]{32,}/g, (s) => (/[0-9]/.test(s) && /[A-Za-z]/.test(s) ? MASK : s))
    .replace(/\/\/([^/@:\s]*):[^/@\s]*@/g, `//$1:${MASK}@`)
    .replace(/\s+/g, ' ')
    .trim();
  if (out.length > max) out = `${out.slice(0, max - 1)}…`;
  return out;
}

/** The first line of a plugin's stderr that says something, redacted. */
export function firstStderrLine(stderr: string): string {
  const line = stderr
    .split(/\r?\n/)
    .map((l) => l.trim())
    .find((l) => l !== '');
  return line === undefined ? '' : redactCredentials(line);
}

function systemCodeOf(err: unknown): string | undefined {
  for (let e: unknown = err, i = 0; e !== undefined && e !== null && i < 5; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** OpenSSL's and Node's TLS verdicts (EPROTO: https spoken to something that is not TLS). */
export function isTlsCode(code: string): boolean {
  return (
    /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|SELF_SIGNED_|DEPTH_ZERO_|HOSTNAME_MISMATCH)/.test(code) ||
    code === 'EPROTO' ||
    code === 'INVALID_CA' ||
    code === 'INVALID_PURPOSE'
  );
}

/** What OpenSSL's verdict means for a person, from the error's text. */
function tlsReason(code: string, text: string): string {
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH')
    return "the server's certificate is not issued for the address in the kubeconfig";
  if (code === 'CERT_HAS_EXPIRED') return "the server's certificate has expired";
  if (code === 'CERT_NOT_YET_VALID')
    return "the server's certificate is not valid yet (is this machine's clock right?)";
  if (code === 'EPROTO' || code.startsWith('ERR_SSL_'))
    return 'the server does not speak TLS (is the address or port in the kubeconfig right?)';
  if (/SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|DEPTH_ZERO/.test(code))
    return "the server's certificate is not signed by the certificate authority in the kubeconfig";
  const reason = /reason: (.*)$/m.exec(text)?.[1];
  return reason !== undefined ? reason.trim() : 'the TLS handshake failed';
}

function firstLine(text: string): string {
  return text.split('\n')[0]?.trim() ?? '';
}

/** HTTP status of an API error (ApiException.code, or statusCode of older clients). */
export function failureStatus(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown } | undefined;
  if (typeof e?.code === 'number') return e.code;
  return typeof e?.statusCode === 'number' ? e.statusCode : undefined;
}

/** The API server's own explanation (Status.message), if the error body has one. */
export function failureStatusMessage(err: unknown): string | undefined {
  const body = (err as { body?: unknown } | undefined)?.body;
  try {
    const parsed: unknown = typeof body === 'string' ? JSON.parse(body) : body;
    const message = (parsed as { message?: unknown } | undefined)?.message;
    return typeof message === 'string' ? message : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Classifies a failed API call. `exec`: the current user's credential plugin, if the kubeconfig
 * has one (without it, a plugin's bare stderr Error cannot be told from other errors).
 */
export function classifyKubeFailure(err: unknown, exec?: ExecCredentialConfig): KubeFailure {
  const status = failureStatus(err);
  if (status !== undefined) {
    const message = failureStatusMessage(err);
    return { kind: 'status', status, ...(message !== undefined ? { message } : {}) };
  }
  const e = err as { code?: unknown; syscall?: unknown; path?: unknown; name?: unknown } | undefined;
  // spawn's own error: the plugin is not there (ENOENT) or cannot be run (EACCES).
  if (typeof e?.syscall === 'string' && e.syscall.startsWith('spawn')) {
    const command =
      typeof e.path === 'string' && e.path !== ''
        ? e.path
        : (exec?.command ?? e.syscall.replace(/^spawn\s*/, ''));
    return {
      kind: 'exec-missing',
      command,
      plugin: credentialPlugin(command, exec),
      notExecutable: e.code === 'EACCES' || e.code === 'EPERM',
    };
  }
  const code = systemCodeOf(err);
  const text = err instanceof Error ? err.message : String(err);
  if (code !== undefined && isTlsCode(code)) return { kind: 'tls', code, reason: tlsReason(code, text) };
  if (code !== undefined) return { kind: 'unreachable', code };
  if (exec?.command !== undefined && exec.command !== '' && e?.name !== 'FetchError') {
    const plugin = credentialPlugin(exec.command, exec);
    if (err instanceof SyntaxError)
      return {
        kind: 'exec-failed',
        command: exec.command,
        plugin,
        firstLine: 'it printed no credential (no ExecCredential JSON on its output)',
      };
    if (err instanceof Error)
      return {
        kind: 'exec-failed',
        command: exec.command,
        plugin,
        firstLine: firstStderrLine(err.message) || 'it exited with an error and printed nothing on stderr',
      };
  }
  // Never echo an unknown error's text whole: it could be a plugin's output.
  return { kind: 'other', text: redactCredentials(firstLine(text)) };
}

/**
 * Who a 403 names: `User "alice" cannot list resource ...` → alice. The RoleBinding that fixes
 * it binds that subject (a service account has its own flag).
 */
export function forbiddenSubject(statusMessage: string | undefined): RoleBindingSubject | undefined {
  const user = /\bUser "([^"]+)" cannot\b/.exec(statusMessage ?? '')?.[1];
  return user !== undefined ? subjectOfUser(user) : undefined;
}

export type RoleBindingSubject =
  { kind: 'User'; name: string } | { kind: 'ServiceAccount'; namespace: string; name: string };

/** A Kubernetes user name as a RoleBinding subject (`system:serviceaccount:ns:name` is a service account). */
export function subjectOfUser(user: string): RoleBindingSubject {
  const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(user);
  return sa !== null
    ? { kind: 'ServiceAccount', namespace: sa[1]!, name: sa[2]! }
    : { kind: 'User', name: user };
}

/** The command a cluster admin runs to give `subject` the queuesplit-developer role in `namespace`. */
export function developerRoleBindingCommand(namespace: string, subject: RoleBindingSubject): string {
  const who =
    subject.kind === 'User'
      ? `--user=${shellWord(subject.name)}`
      : `--serviceaccount=${shellWord(`${subject.namespace}:${subject.name}`)}`;
  const name = `queuesplit-developer-${subject.name}`
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .slice(0, 63)
    .replace(/[-.]+$/, '');
  return `kubectl create rolebinding ${name} --clusterrole=queuesplit-developer ${who} -n ${shellWord(namespace)}`;
}

function shellWord(text: string): string {
  return /^[\w.:@/=-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
