#!/usr/bin/env node
// `stampede-queue <command> [flags]` (also installed as `stampede`): one entry point for every command of bin/commands.ts.
// The command's script runs in this process (no launcher in between), so a
// SIGTERM reaches the command itself and it drains and exits 0 however it was started.
import { COMMANDS } from './commands.ts';

const USAGE = `usage: stampede-queue <command> [flags]        (stampede-queue <command> --help for its flags; installed, \`stampede\` is the same command)

commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`)
  .join('\n')}

env: DATABASE_URL=postgres://user:password@host:port/database, STAMPEDE_LOG=debug|info|warn|error`;

const name = process.argv[2];
if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
  process.stdout.write(`${USAGE}\n`);
  process.exit(name === undefined ? 2 : 0);
}
const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
if (!command) {
  process.stderr.write(`stampede: unknown command "${name}"; expected one of ${Object.keys(COMMANDS).join(', ')}\n\n${USAGE}\n`);
  process.exit(2);
}
// The script reads its flags from process.argv.slice(2), as when run directly.
process.argv.splice(2, 1);
// The compiler rewrites the relative .ts to the .js beside this file in the build.
await import(command.script);
