// Prometheus metrics of the agent server: runs by status, queue depth (from the database, so every
// process reports the shared queue) and run latency (this process's runs).
import type { SqlExecutor } from '../../platform/db/index.ts';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export class RunMetrics {
  readonly #counts = new Array<number>(BUCKETS.length + 1).fill(0);
  #sum = 0;
  #total = 0;
  readonly #statuses = new Map<string, number>();

  observe(status: string, seconds: number): void {
    this.#statuses.set(status, (this.#statuses.get(status) ?? 0) + 1);
    this.#sum += seconds;
    this.#total++;
    const index = BUCKETS.findIndex((bound) => seconds <= bound);
    this.#counts[index === -1 ? BUCKETS.length : index]!++;
  }

  async render(db: SqlExecutor, activeRuns: number): Promise<string> {
    const rows = await db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM agent_runs GROUP BY status`);
    const lines: string[] = [];
    lines.push('# HELP berth_agent_runs Runs stored, by status.', '# TYPE berth_agent_runs gauge');
    for (const status of ['pending', 'running', 'success', 'error', 'timeout', 'interrupted']) {
      lines.push(`berth_agent_runs{status="${status}"} ${rows.find((row) => row.status === status)?.n ?? 0}`);
    }
    lines.push('# HELP berth_agent_queue_depth Runs waiting to start.', '# TYPE berth_agent_queue_depth gauge');
    lines.push(`berth_agent_queue_depth ${rows.find((row) => row.status === 'pending')?.n ?? 0}`);
    lines.push('# HELP berth_agent_worker_active_runs Runs executing in this process.', '# TYPE berth_agent_worker_active_runs gauge');
    lines.push(`berth_agent_worker_active_runs ${activeRuns}`);
    lines.push('# HELP berth_agent_runs_finished_total Runs finished by this process, by status.', '# TYPE berth_agent_runs_finished_total counter');
    for (const [status, count] of this.#statuses) lines.push(`berth_agent_runs_finished_total{status="${status}"} ${count}`);
    lines.push('# HELP berth_agent_run_duration_seconds Run execution time in this process.', '# TYPE berth_agent_run_duration_seconds histogram');
    let cumulative = 0;
    BUCKETS.forEach((bound, index) => {
      cumulative += this.#counts[index]!;
      lines.push(`berth_agent_run_duration_seconds_bucket{le="${bound}"} ${cumulative}`);
    });
    lines.push(`berth_agent_run_duration_seconds_bucket{le="+Inf"} ${this.#total}`);
    lines.push(`berth_agent_run_duration_seconds_sum ${this.#sum}`, `berth_agent_run_duration_seconds_count ${this.#total}`);
    return `${lines.join('\n')}\n`;
  }
}
