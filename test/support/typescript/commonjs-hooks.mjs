// Module hooks (register.mjs): a TypeScript file is CommonJS, compiled by esbuild-register.
export async function load(url, context, nextLoad) {
  if (url.startsWith('file:') && /\.[cm]?tsx?$/.test(url)) return { format: 'commonjs', shortCircuit: true };
  return nextLoad(url, context);
}
