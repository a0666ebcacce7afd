// Preloaded into every node process of a scenario run (NODE_OPTIONS=--require, which --cpu-prof is not
// allowed in): samples the process's CPU profile and, at exit, writes it with the process's CPU time and
// peak RSS to $STAMPEDE_COST_DIR/<script>-<pid>.cpuprofile / .json. A SIGKILLed process writes nothing.
// Used only by scripts/harness-cost/run.sh; nothing in the package loads it.
'use strict';
const dir = process.env.STAMPEDE_COST_DIR;
if (dir) {
  const { Session } = require('node:inspector');
  const { writeFileSync } = require('node:fs');
  const { basename, join } = require('node:path');
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.start');
  const name = `${basename(process.argv[1] ?? 'node', '.js')}-${process.pid}`;
  process.on('exit', () => {
    // An in-process session answers synchronously, so the profile is written before the process ends.
    session.post('Profiler.stop', (err, res) => {
      if (!err) writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(res.profile));
    });
    const cpu = process.cpuUsage();
    const ru = process.resourceUsage();
    writeFileSync(join(dir, `${name}.json`), JSON.stringify({ argv: process.argv.slice(1), userMs: cpu.user / 1000, systemMs: cpu.system / 1000, maxRssKiB: ru.maxRSS }));
  });
}
