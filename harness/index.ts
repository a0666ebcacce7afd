// The public API of stampede's harness (`stampede-queue/harness`): define your own
// scenario, run one from code, provision a real Postgres for your own tests.
export {
  defineScenario,
  mergeScenario,
  validateScenario,
  loadScenarioFile,
  BASE_SCENARIO,
  type Scenario,
  type ScenarioInput,
  type SchedulerNode,
  type EngineSettings,
} from './scenario.ts';
export { runScenario, type RunOptions, type RunResult } from './runner/run.ts';
export { recheck } from './runner/recheck.ts';
export { provisionPostgres, type PostgresServer, type ProvisionOptions } from './postgres/provision.ts';
export { createDatabase, dropDatabase, withDatabase } from './postgres/databases.ts';
export { CHECKERS, runCheckers, verdictOf, type CheckerName, type CheckerBounds, type Verdict } from './checkers/index.ts';
export type { HistoryEvent, FinalState, InvariantResult } from './history.ts';
export { SCENARIOS } from '../scenarios/index.ts';
