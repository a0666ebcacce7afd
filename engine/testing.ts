// `stampede-queue/testing`: aids for a user's own tests, kept out of the package entry so that what a service
// embeds is not mixed with what only a test needs. Each is one of the engine's own seams (engine/clock.ts,
// engine/rng.ts), the same ones the project's tests and harness use.
export { ManualClock, SkewedClock } from './clock.ts';
export { SeededRng } from './rng.ts';
