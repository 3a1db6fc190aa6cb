// The product version, read from the root package.json at build time by esbuild/tsx so the
// extension, sidecar and agent always report the same one.
import pkg from '../package.json';

export const productVersion: string = pkg.version;
