// Checks a repository's graph configuration (langgraph.json) before anything is installed: it must parse,
// name at least one graph, and every graph file must exist inside the repository.
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { BuildFailure } from './run-command.ts';

const NODE_EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs', '.tsx', '.jsx']);

export interface GraphConfigSummary {
  /** Absolute folder of the configuration file: where build commands run and agent servers start. */
  configDir: string;
  graphs: Record<string, { file: string; exportName: string | undefined }>;
}

function inside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

export async function checkGraphConfig(repoDir: string, configPath: string): Promise<GraphConfigSummary> {
  const file = path.resolve(repoDir, configPath);
  if (!inside(repoDir, file)) throw new BuildFailure(`graph_config_path ${configPath} points outside the repository`);
  if (!(await isFile(file))) throw new BuildFailure(`graph configuration ${configPath} does not exist in the repository`);
  let config: unknown;
  try {
    config = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new BuildFailure(`graph configuration ${configPath} is not valid JSON: ${(error as Error).message}`);
  }
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new BuildFailure(`graph configuration ${configPath} must be a JSON object`);
  }
  const { graphs, env, dependencies, node_version: nodeVersion } = config as Record<string, unknown>;
  if (graphs === null || typeof graphs !== 'object' || Array.isArray(graphs) || Object.keys(graphs).length === 0) {
    throw new BuildFailure(`graph configuration ${configPath}: "graphs" must map at least one graph id to a file`);
  }
  if (env !== undefined && typeof env !== 'string' && (env === null || typeof env !== 'object' || Array.isArray(env))) {
    throw new BuildFailure(`graph configuration ${configPath}: "env" must be an object or a path to an env file`);
  }
  if (dependencies !== undefined && (!Array.isArray(dependencies) || dependencies.some((item) => typeof item !== 'string'))) {
    throw new BuildFailure(`graph configuration ${configPath}: "dependencies" must be a list of strings`);
  }
  if (nodeVersion !== undefined && nodeVersion !== null && !(Number.parseInt(String(nodeVersion), 10) >= 20)) {
    throw new BuildFailure(`graph configuration ${configPath}: "node_version" must be 20 or later`);
  }
  const configDir = path.dirname(file);
  const summary: GraphConfigSummary = { configDir, graphs: {} };
  for (const [graphId, spec] of Object.entries(graphs as Record<string, unknown>)) {
    const target = typeof spec === 'string' ? spec : (spec as { path?: unknown } | null)?.path;
    if (typeof target !== 'string' || target === '') {
      throw new BuildFailure(`graph configuration ${configPath}: graph "${graphId}" must be "./file.ts:export" or {"path": ...}`);
    }
    const colon = target.lastIndexOf(':');
    const [fileName, exportName] = colon > 1 ? [target.slice(0, colon), target.slice(colon + 1)] : [target, undefined];
    const graphFile = path.resolve(configDir, fileName);
    if (!NODE_EXTENSIONS.has(path.extname(graphFile))) {
      throw new BuildFailure(`graph configuration ${configPath}: graph "${graphId}" file ${fileName} is not a JavaScript or TypeScript file`);
    }
    if (!inside(repoDir, graphFile) || !(await isFile(graphFile))) {
      throw new BuildFailure(`graph configuration ${configPath}: graph "${graphId}" file ${fileName} does not exist`);
    }
    summary.graphs[graphId] = { file: graphFile, exportName };
  }
  return summary;
}
