// @paysaga/client is built from the repository's client/http/ (its one source): JavaScript for both
// module systems (esbuild) and one declaration file per system with every type it names inlined
// (rollup-plugin-dts), so a backend needs nothing of paysaga but this package, undici and zod.
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: '../../client/http/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  tsconfig: './tsconfig.json',
  target: 'node20',
  platform: 'node',
  outDir: 'dist',
  clean: true,
  sourcemap: true,
  // What a backend installs beside it (package.json dependencies); everything of paysaga is bundled.
  external: ['undici', 'zod'],
});
