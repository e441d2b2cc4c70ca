/**
 * Which top-level folders import which, read from the sources with TypeScript's own import scanner and
 * module resolution (imports, re-exports, `import type`, `require` and `import()` alike).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

export type FolderGraph = Map<string, Set<string>>;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** Edges between `folders` (relative to `root`); imports inside one folder and of packages are left out. */
export function folderGraph(root: string, folders: readonly string[]): FolderGraph {
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    allowJs: true,
  };
  const topFolder = (file: string) => path.relative(root, file).split(path.sep)[0]!;
  const graph: FolderGraph = new Map(folders.map((folder) => [folder, new Set<string>()]));
  for (const folder of folders) {
    for (const file of sourceFiles(path.join(root, folder))) {
      const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
      for (const { fileName } of importedFiles) {
        if (!fileName.startsWith('.')) continue;
        const resolved = ts.resolveModuleName(fileName, file, options, ts.sys).resolvedModule;
        if (!resolved) throw new Error(`${path.relative(root, file)}: cannot resolve ${fileName}`);
        const target = topFolder(resolved.resolvedFileName);
        if (target !== folder && graph.has(target)) graph.get(folder)!.add(target);
      }
    }
  }
  return graph;
}

/** A cycle of the graph as a path that ends where it starts, or undefined when there is none. */
export function findCycle(graph: FolderGraph): string[] | undefined {
  const done = new Set<string>();
  const visit = (node: string, trail: string[]): string[] | undefined => {
    const seen = trail.indexOf(node);
    if (seen >= 0) return [...trail.slice(seen), node];
    if (done.has(node)) return undefined;
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next, [...trail, node]);
      if (cycle) return cycle;
    }
    done.add(node);
    return undefined;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node, []);
    if (cycle) return cycle;
  }
  return undefined;
}

export function describeGraph(graph: FolderGraph): string {
  return [...graph].map(([from, to]) => `${from} -> ${[...to].sort().join(', ') || '(nothing)'}`).join('\n');
}
