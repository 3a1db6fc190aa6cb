// Where the process backend can run: its brokers and the control plane come from Debian's
// packages and a real kubelet with containerd (test/env/k8s/node/README.md), so only Linux with
// dpkg. Elsewhere (a macOS laptop) env:up says so and names what does run there: the broker
// suites on containers (README "The brokers in containers").

const CONTAINERS_HINT =
  'the broker suites run there on containers: `npm run env:up -- --brokers --containers`, then `npm run test:smoke && npm run test:conformance`, or `npm test -- --containers` (README "The brokers in containers")';

/** Why env:up cannot run the process backend on this machine; undefined when it can. */
export function processBackendRefusal(
  platform: NodeJS.Platform,
  hasDpkg: boolean,
  brokersOnly: boolean,
): string | undefined {
  const where =
    platform !== 'linux'
      ? `this machine is ${platform}`
      : hasDpkg
        ? undefined
        : "this Linux has no dpkg (the packages are Debian's)";
  if (where === undefined) return undefined;
  const what = brokersOnly
    ? "the brokers as local processes need Linux with Debian's packages"
    : "the control plane and the real node (a kubelet with containerd) that the sidecar, cluster and e2e suites and `npm run demo` need run only on Linux with Debian's packages; they have no container backend yet (issue 34)";
  return `env:up: ${what}, and ${where}. ${CONTAINERS_HINT[0]!.toUpperCase()}${CONTAINERS_HINT.slice(1)}.`;
}
