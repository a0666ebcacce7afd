import { randomBytes } from 'node:crypto';
import { createDatabase, dropDatabase } from '../harness/postgres/databases.ts';
import type { Logger } from '../engine/log.ts';
import { FAMILIES } from './systems/configs.ts';
import type { SystemConfig } from './systems/types.ts';

/**
 * What every workload gets: the one server, and a fresh database per system
 * config per workload per round, cloned from a template where that config's
 * library is already installed (so installing is never inside a timing).
 */
export class BenchContext {
  private readonly templates = new Map<string, string>();
  private readonly created: string[] = [];
  readonly tag = randomBytes(3).toString('hex');

  constructor(
    readonly adminUrl: string,
    readonly log: Logger,
  ) {}

  /** A fresh database with `config`'s library installed. */
  async freshDatabase(config: SystemConfig): Promise<{ url: string; drop: () => Promise<void> }> {
    let template = this.templates.get(config.id);
    if (!template) {
      template = `bench_tpl_${this.tag}_${config.id.replace(/-/g, '_')}`;
      const url = await createDatabase(this.adminUrl, template);
      this.created.push(template);
      await FAMILIES[config.family].install(url, config.settings);
      this.templates.set(config.id, template);
    }
    return this.fresh(template);
  }

  /** A fresh empty database (the raw-SQL limit needs no library). */
  async emptyDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
    return this.fresh(undefined);
  }

  private async fresh(template: string | undefined) {
    const name = `bench_${this.tag}_${randomBytes(4).toString('hex')}`;
    const url = await createDatabase(this.adminUrl, name, template);
    this.created.push(name);
    return {
      url,
      drop: async () => {
        await dropDatabase(this.adminUrl, name);
        this.created.splice(this.created.indexOf(name), 1);
      },
    };
  }

  /** Drops every database this run made (templates included). */
  async cleanup(): Promise<void> {
    for (const name of this.created.splice(0)) await dropDatabase(this.adminUrl, name).catch(() => {});
  }
}
