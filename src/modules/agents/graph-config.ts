// langgraph.json: which graphs this agent server serves, and the settings users rely on.
import { readFile } from 'node:fs/promises';
import path from 'node:path';

export class GraphConfigError extends Error {}

export interface GraphSpec {
  graphId: string;
  /** Absolute path of the file that exports the graph. */
  file: string;
  exportName: string;
  description: string | undefined;
}

export interface HttpSettings {
  app: { file: string; exportName: string } | undefined;
  cors: Record<string, unknown> | undefined;
  disableAssistants: boolean;
  disableThreads: boolean;
  disableRuns: boolean;
  disableStore: boolean;
  disableMeta: boolean;
  disableWebhooks: boolean;
}

export interface StoreSettings {
  ttl: { defaultTtlMinutes: number | null; refreshOnRead: boolean; sweepIntervalMinutes: number } | undefined;
}

export interface GraphConfig {
  /** Folder holding langgraph.json: graph paths and node_modules resolve from here. */
  projectDir: string;
  configFile: string;
  graphs: GraphSpec[];
  env: Record<string, string>;
  http: HttpSettings;
  store: StoreSettings;
}

function parseTarget(value: string, projectDir: string, where: string): { file: string; exportName: string } {
  const index = value.lastIndexOf(':');
  // "./graph.ts" alone exports the graph as default; Windows drive letters never reach here.
  const [rel, exportName] = index > 1 ? [value.slice(0, index), value.slice(index + 1)] : [value, 'default'];
  if (!rel || !exportName) throw new GraphConfigError(`${where}: expected "./path/to/file.ts:exportName", got "${value}"`);
  return { file: path.resolve(projectDir, rel), exportName };
}

/** Parses a .env file: KEY=value lines, optional quotes, # comments. */
export function parseDotEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(.*)$/.exec(line);
    if (!match) continue;
    let value = match[2]!;
    const quote = value[0];
    const closing = quote === '"' || quote === "'" ? value.indexOf(quote, 1) : -1;
    if (closing > 0) value = value.slice(1, closing);
    else value = value.replace(/\s+#.*$/, '');
    env[match[1]!] = value;
  }
  return env;
}

export async function loadGraphConfig(configFile: string): Promise<GraphConfig> {
  const file = path.resolve(configFile);
  let raw: any;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new GraphConfigError(`Cannot read the graph configuration ${file}: ${(error as Error).message}`);
  }
  if (typeof raw !== 'object' || raw === null) throw new GraphConfigError(`${file}: expected a JSON object`);
  const projectDir = path.dirname(file);
  if (typeof raw.graphs !== 'object' || raw.graphs === null || Object.keys(raw.graphs).length === 0) {
    throw new GraphConfigError(`${file}: "graphs" must map graph ids to "./file.ts:export"`);
  }
  const graphs: GraphSpec[] = Object.entries(raw.graphs).map(([graphId, entry]: [string, any]) => {
    const target = typeof entry === 'string' ? entry : entry?.path;
    if (typeof target !== 'string') throw new GraphConfigError(`${file}: graphs.${graphId} must be a string or {"path": …}`);
    const { file: graphFile, exportName } = parseTarget(target, projectDir, `${file}: graphs.${graphId}`);
    return { graphId, file: graphFile, exportName, description: typeof entry === 'object' ? entry.description : undefined };
  });

  let env: Record<string, string> = {};
  if (typeof raw.env === 'string') {
    const envFile = path.resolve(projectDir, raw.env);
    try {
      env = parseDotEnv(await readFile(envFile, 'utf8'));
    } catch (error) {
      throw new GraphConfigError(`${file}: cannot read env file ${envFile}: ${(error as Error).message}`);
    }
  } else if (raw.env && typeof raw.env === 'object') {
    env = Object.fromEntries(Object.entries(raw.env).map(([key, value]) => [key, String(value)]));
  }

  const http = raw.http ?? {};
  const ttl = raw.store?.ttl;
  return {
    projectDir,
    configFile: file,
    graphs,
    env,
    http: {
      app: typeof http.app === 'string' ? parseTarget(http.app, projectDir, `${file}: http.app`) : undefined,
      cors: http.cors ?? undefined,
      disableAssistants: http.disable_assistants === true,
      disableThreads: http.disable_threads === true,
      disableRuns: http.disable_runs === true,
      disableStore: http.disable_store === true,
      disableMeta: http.disable_meta === true,
      disableWebhooks: http.disable_webhooks === true,
    },
    store: {
      ttl: ttl
        ? {
          defaultTtlMinutes: typeof ttl.default_ttl === 'number' ? ttl.default_ttl : null,
          refreshOnRead: ttl.refresh_on_read !== false,
          sweepIntervalMinutes: typeof ttl.sweep_interval_minutes === 'number' ? ttl.sweep_interval_minutes : 60,
        }
        : undefined,
    },
  };
}
