import type { Logger } from 'pino';
import { ShutdownList } from '../shutdown.ts';
import type { Db } from './db.ts';
import { migrate } from './migrate.ts';
import { openDb, type OpenDbOptions } from './index.ts';

/**
 * A composition root's start: the database opened and migrated, and the shutdown list that closes it
 * last (everything the root starts afterwards is added to the list, and stopped first).
 */
export async function openStorage(options: OpenDbOptions, logger: Logger): Promise<{ db: Db; shutdown: ShutdownList }> {
  const db = await openDb(options);
  const shutdown = new ShutdownList(logger);
  shutdown.add(() => db.close());
  try {
    await migrate(db);
  } catch (error) {
    await shutdown.closeAll();
    throw error;
  }
  return { db, shutdown };
}
