// Isolation from a real controller. The controller is cluster-wide, and other suites run one on
// the same API server; it would act on this suite's QueueSplits (reject them, hold finalizers,
// redirect the workload) while the suite plays the controller itself. So the suite installs the
// very same CRD under a private API group and puts this small proxy between the sidecar and the
// real API server: it rewrites the QueueSplit group in paths and bodies, both ways, and passes
// everything else (authentication, RBAC, validation, status subresource, finalizers) through
// untouched. The sidecar bundle runs unchanged and believes it talks to queuesplit.dev.
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';

export interface GroupProxy {
  /** http://127.0.0.1:<port> */
  url: string;
  close(): Promise<void>;
}

function swap(text: string, from: string, to: string): string {
  // Only the group as it appears in API paths, apiVersions and resource names.
  return (
    text
      .split(`/apis/${from}/`)
      .join(`/apis/${to}/`)
      .split(`"${from}/`)
      .join(`"${to}/`)
      .split(`.${from}`)
      .join(`.${to}`)
      // A SelfSubjectAccessReview's resourceAttributes (the sidecar's preflight, core/accessPreflight.ts).
      .split(`"group":"${from}"`)
      .join(`"group":"${to}"`)
  );
}

export async function startGroupProxy(
  apiServer: string,
  caFile: string,
  realGroup: string,
  privateGroup: string,
): Promise<GroupProxy> {
  const upstream = new URL(apiServer);
  const ca = fs.readFileSync(caFile);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.from(swap(Buffer.concat(chunks).toString('utf8'), realGroup, privateGroup));
      const headers = { ...req.headers, host: upstream.host, 'content-length': String(body.length) };
      const out = https.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: swap(req.url ?? '/', realGroup, privateGroup),
          headers,
          ca,
        },
        (reply) => {
          if (/[?&]watch=(true|1)\b/.test(req.url ?? '')) {
            // A watch streams one JSON event per line for as long as it lasts: each line is
            // rewritten and passed on as it comes (buffered whole, no event would ever arrive).
            const headers = { ...reply.headers };
            delete headers['content-length'];
            res.writeHead(reply.statusCode ?? 502, headers);
            let partial = '';
            reply.on('data', (c: Buffer) => {
              const lines = (partial + c.toString('utf8')).split('\n');
              partial = lines.pop()!;
              for (const line of lines) res.write(`${swap(line, privateGroup, realGroup)}\n`);
            });
            reply.on('end', () => res.end(partial ? swap(partial, privateGroup, realGroup) : undefined));
            reply.on('error', () => res.destroy());
            return;
          }
          const replyChunks: Buffer[] = [];
          reply.on('data', (c: Buffer) => replyChunks.push(c));
          reply.on('end', () => {
            const replyBody = Buffer.from(
              swap(Buffer.concat(replyChunks).toString('utf8'), privateGroup, realGroup),
            );
            const replyHeaders = { ...reply.headers, 'content-length': String(replyBody.length) };
            delete replyHeaders['transfer-encoding'];
            res.writeHead(reply.statusCode ?? 502, replyHeaders).end(replyBody);
          });
        },
      );
      out.on('error', (err) => res.writeHead(502).end(String(err)));
      out.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A copy of a token kubeconfig that reaches the API server through the proxy. */
export function proxiedKubeconfig(file: string, proxyUrl: string, out: string): string {
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  const user = kc.getCurrentUser();
  const context = kc.getCurrentContext();
  const namespace = kc.getContextObject(context)?.namespace ?? 'default';
  if (!user?.token) throw new Error(`${file} has no token user`);
  const yaml = stringify({
    apiVersion: 'v1',
    kind: 'Config',
    // client-node refuses plain http unless told; it is loopback to the proxy, which verifies upstream.
    clusters: [{ name: 'via-proxy', cluster: { server: proxyUrl, 'insecure-skip-tls-verify': true } }],
    users: [{ name: user.name, user: { token: user.token } }],
    contexts: [{ name: context, context: { cluster: 'via-proxy', user: user.name, namespace } }],
    'current-context': context,
  });
  fs.writeFileSync(out, yaml, { mode: 0o600 });
  return out;
}
