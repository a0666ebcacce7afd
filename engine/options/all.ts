// Every declared component, by the name docs/configuration.md's generated tables use. Read by the docs generator
// (`npm run docs:options`) and the test that keeps the docs equal to the declarations; nothing at run time needs it.
import { ARCHIVER } from '../archive/job-archiver.ts';
import { CRON } from '../cron/materializer.ts';
import { PRUNER } from '../effects/pruner.ts';
import { RELAY } from '../effects/relay.ts';
import { SAMPLER } from '../metrics/queue-state-sampler.ts';
import { WORKER } from '../worker/options.ts';
import { RESCUER } from '../worker/rescuer.ts';
import { DASHBOARD } from '../dashboard/server.ts';
import type { OptionsDeclaration } from './declare.ts';

export const DECLARATIONS: readonly OptionsDeclaration[] = [WORKER, RESCUER, CRON, RELAY, PRUNER, ARCHIVER, SAMPLER, DASHBOARD];
