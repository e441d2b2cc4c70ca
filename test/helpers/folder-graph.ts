/**
 * Which files and top-level folders import which, read from the sources with TypeScript's own import scanner and
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

/** Each source file of `folders` with the files of ours it imports (packages left out), by path from `root`. */
export function fileGraph(root: string, folders: readonly string[]): FolderGraph {
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    allowJs: true,
  };
  const graph: FolderGraph = new Map();
  for (const folder of folders) {
    for (const file of sourceFiles(path.join(root, folder))) {
      const edges = new Set<string>();
      const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
      for (const { fileName } of importedFiles) {
        if (!fileName.startsWith('.')) continue;
        const resolved = ts.resolveModuleName(fileName, file, options, ts.sys).resolvedModule;
        if (!resolved) throw new Error(`${path.relative(root, file)}: cannot resolve ${fileName}`);
        edges.add(path.relative(root, resolved.resolvedFileName));
      }
      graph.set(path.relative(root, file), edges);
    }
  }
  return graph;
}

/** Edges between `folders` (relative to `root`); imports inside one folder and of packages are left out. */
export function folderGraph(root: string, folders: readonly string[]): FolderGraph {
  const topFolder = (file: string) => file.split(path.sep)[0]!;
  const graph: FolderGraph = new Map(folders.map((folder) => [folder, new Set<string>()]));
  for (const [file, imported] of fileGraph(root, folders)) {
    const folder = topFolder(file);
    for (const target of imported) {
      const to = topFolder(target);
      if (to !== folder && graph.has(to)) graph.get(folder)!.add(to);
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
