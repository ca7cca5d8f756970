// The `berth` command.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.ts';
import { startBerth } from './main.ts';
import { startAgentServer } from './agent-server.ts';
import { openDb, migrate, storageOptions } from './platform/db/index.ts';
import { TenantStore } from './platform/auth/index.ts';

const USAGE = `Usage: berth <command> [options]

Commands:
  serve [--role all|api|worker] [--host H] [--port N]   run Berth (control plane, platform API, workers)
  agent-server --config langgraph.json [--host H] [--port N]
                                                        serve the graphs of one configuration (LangGraph API)
  migrate                                               apply database migrations and exit
  keys create [--workspace ID] [--organization-scoped] [--role admin|member] [--description TEXT]
                                                        issue an API key (printed once)
  workspaces create NAME                                create a workspace in the default organization
  workspaces list

Configuration comes from the environment: see README.md.`;

async function withStore<T>(fn: (store: TenantStore, applied: number[]) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const db = await openDb(storageOptions(config));
  try {
    const applied = await migrate(db);
    return await fn(new TenantStore(db), applied);
  } finally {
    await db.close();
  }
}

async function defaultOrganization(store: TenantStore) {
  const organization = await store.firstOrganization();
  if (!organization) throw new ConfigError('No organization yet: run `berth serve` once first.');
  return organization;
}

/** Graceful shutdown on SIGTERM/SIGINT: finish what is in flight, close storage; give up after 30 s. */
function stopOnSignals(running: { logger: { info(details: object, message: string): void }; close(): Promise<void> }): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    running.logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    running.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

async function serve(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { role: { type: 'string' }, host: { type: 'string' }, port: { type: 'string' } } });
  const env = { ...process.env };
  if (values.role) env.BERTH_ROLE = values.role;
  if (values.host) env.HOST = values.host;
  if (values.port) env.PORT = values.port;
  const berth = await startBerth(loadConfig(env));
  const { bootstrap } = berth;
  const lines = [
    `Berth ${berth.url ? `listening on ${berth.url}` : 'worker started'} (storage: ${berth.db.engine}, role: ${berth.config.role})`,
    `Workspace ID: ${bootstrap.workspaceId}`,
  ];
  if (bootstrap.generatedKey) lines.push(`Admin API key (shown once, also saved to ${bootstrap.keyFile}): ${bootstrap.generatedKey}`);
  else if (bootstrap.keySource === 'BERTH_API_KEY') lines.push('Admin API key: the value of BERTH_API_KEY');
  else lines.push(`Admin API key: in ${bootstrap.keyFile} (if it was generated here)`);
  if (berth.url) lines.push(`API reference: ${berth.url}/docs`);
  process.stdout.write(`${lines.join('\n')}\n`);

  stopOnSignals(berth);
}

async function agentServer(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { config: { type: 'string', short: 'c' }, host: { type: 'string' }, port: { type: 'string' } } });
  const env = { ...process.env };
  if (values.host) env.HOST = values.host;
  if (values.port) env.PORT = values.port;
  const config = loadConfig(env);
  const running = await startAgentServer(config, { configFile: values.config ?? 'langgraph.json' });
  process.stdout.write(`Berth agent server listening on ${running.url} (storage: ${running.db.engine}, graphs: ${running.server.registry.ids().join(', ')})\nAPI reference: ${running.url}/docs\n`);
  stopOnSignals(running);
}

async function keys(args: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args, allowPositionals: true,
    options: { workspace: { type: 'string' }, 'organization-scoped': { type: 'boolean' }, role: { type: 'string' }, description: { type: 'string' } },
  });
  if (positionals[0] !== 'create') throw new ConfigError(USAGE);
  const role = values.role ?? 'member';
  if (role !== 'admin' && role !== 'member') throw new ConfigError('--role must be admin or member');
  await withStore(async (store) => {
    const organization = await defaultOrganization(store);
    const workspaceId = values['organization-scoped'] ? null : (values.workspace ?? organization.defaultWorkspaceId);
    if (workspaceId && (await store.workspaceOrganization(workspaceId)) !== organization.id) throw new ConfigError(`No workspace ${workspaceId}`);
    const { key, record } = await store.createApiKey({ organizationId: organization.id, workspaceId, role, description: values.description ?? '' });
    process.stdout.write(`${JSON.stringify({ key, ...record })}\n`);
  });
}

async function workspaces(args: string[]): Promise<void> {
  const [action, name] = args;
  await withStore(async (store) => {
    const organization = await defaultOrganization(store);
    if (action === 'create' && name) {
      process.stdout.write(`${JSON.stringify(await store.createWorkspace(organization.id, name))}\n`);
    } else if (action === 'list') {
      for (const workspace of await store.listWorkspaces(organization.id)) process.stdout.write(`${JSON.stringify(workspace)}\n`);
    } else {
      throw new ConfigError(USAGE);
    }
  });
}

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve': return serve(rest);
    case 'agent-server': return agentServer(rest);
    case 'migrate': {
      const applied = await withStore(async (_store, versions) => versions);
      process.stdout.write(applied.length ? `Applied migrations ${applied.join(', ')}\n` : 'The database is current\n');
      return;
    }
    case 'keys': return keys(rest);
    case 'workspaces': return workspaces(rest);
    case undefined: case 'help': case '--help': case '-h':
      process.stdout.write(`${USAGE}\n`);
      return;
    default:
      throw new ConfigError(`Unknown command "${command}".\n\n${USAGE}`);
  }
}

if (import.meta.main) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`berth: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(error instanceof ConfigError ? 2 : 1);
  });
}
