#!/usr/bin/env bash
# The packed-install test: what a user gets from `npm install stampede-queue`.
# npm pack this repository, install the tarball into an empty temporary project
# (its dependencies come from the npm registry), then from plain JavaScript:
# migrate, enqueue and run a job to completion against an embedded Postgres (or
# DATABASE_URL); the README's first example against `npx stampede-queue postgres`;
# `npx stampede-queue --help`, and `npx stampede-queue scenario steady --duration 5`
# with its exit code and report checked. The temporary directory is removed on any exit.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
started=$SECONDS
work="$(mktemp -d "${TMPDIR:-/tmp}/stampede-packed-XXXXXX")"
pg_pid=""
# A `stampede-queue postgres` still running (a step failed) is stopped first; its reaper covers a kill.
trap '[[ -n "$pg_pid" ]] && kill -TERM "$pg_pid" 2>/dev/null; rm -rf "$work"' EXIT
# As root the embedded server runs as the postgres OS user, which must reach the binaries installed here.
chmod 755 "$work"

step() { printf '\n== %s (%d s)\n' "$1" $((SECONDS - started)); }

step "npm pack"
tarball="$(cd "$repo" && npm pack --silent --pack-destination "$work" | tail -n 1)"
mkdir "$work/app"
cd "$work/app"
npm init -y >/dev/null

step "npm install $tarball"
npm install --no-audit --no-fund --loglevel=error "$work/$tarball"
test ! -e node_modules/stampede-queue/dist/.tsbuildinfo
test ! -e node_modules/stampede-queue/test

step "the name resolves to this project"
# `stampede` on the npm registry is somebody else's package: the installed name, its
# package.json and the bin npx runs must all be this repository's.
test -n "$(node -p "require('./package.json').dependencies['stampede-queue'] ?? ''")"
ours="$(node -p "const p = require('$repo/package.json'); p.name + ' / ' + p.description")"
installed="$(node -p "const p = require(require.resolve('stampede-queue/package.json')); p.name + ' / ' + p.description")"
if [[ "$installed" != "$ours" ]]; then
  echo "packed-install: stampede-queue resolved to \"$installed\"; expected \"$ours\"" >&2
  exit 1
fi

step "plain JavaScript: migrate, enqueue, a Worker with effectOnce"
cp "$repo/test/packed-install/app.mjs" .
node app.mjs

step "the README's first screen: npx stampede-queue postgres, then its first example verbatim"
npx --no-install stampede-queue postgres --port 0 > pg.env 2> pg.log &
pg_pid=$!
for _ in $(seq 1 120); do grep -q '^DATABASE_URL=' pg.env && break; kill -0 "$pg_pid" 2>/dev/null || break; sleep 0.5; done
grep -q '^DATABASE_URL=' pg.env || { echo "packed-install: npx stampede-queue postgres printed no DATABASE_URL:" >&2; cat pg.log >&2; exit 1; }
(cd "$repo" && npx tsx test/support/readme-example.ts) > first.mjs
example="$(env "$(head -n 1 pg.env)" node first.mjs)"
echo "$example"
grep -Eq '^job [0-9]+: done$' <<<"$example" || { echo "packed-install: the README example did not end with its job done" >&2; exit 1; }
# SIGTERM, as a supervisor stops it (a script's background job ignores SIGINT). npx's shell dies of it, and the
# command, orphaned, stops the server as on the signal itself.
kill -TERM "$pg_pid"
wait "$pg_pid" || true
for _ in $(seq 1 60); do grep -q 'stopped; its temp dir is removed' pg.log && break; sleep 0.5; done
grep -q 'stopped; its temp dir is removed' pg.log || { echo "packed-install: npx stampede-queue postgres did not stop cleanly on SIGTERM:" >&2; cat pg.log >&2; exit 1; }
pg_pid=""

step "npx stampede-queue --help (and its short alias, npx stampede --help)"
npx --no-install stampede-queue --help | grep -q '^usage: stampede-queue <command>'
npx --no-install stampede --help | grep -q '^usage: stampede-queue <command>'

step "npx stampede-queue scenario steady --duration 5"
code=0
npx --no-install stampede-queue scenario steady --duration 5 --out reports/steady || code=$?
if [[ $code -ne 0 ]]; then
  echo "packed-install: npx stampede-queue scenario steady exited $code; expected 0" >&2
  exit 1
fi
for f in report.md report.html report.json; do
  test -s "reports/steady/$f" || { echo "packed-install: reports/steady/$f is missing" >&2; exit 1; }
done

step "a scenario with otel (slow-worker) without the OpenTelemetry SDK: runs, its two OpenTelemetry checks say what to install"
code=0
npx --no-install stampede-queue scenario slow-worker --duration 5 --json --out reports/otel > otel.json || code=$?
if [[ $code -ne 0 && $code -ne 3 ]]; then
  echo "packed-install: scenario slow-worker without the OpenTelemetry SDK exited $code; expected 0 or 3" >&2
  exit 1
fi
node -e "
const r = require('./otel.json');
for (const name of ['trace-continued', 'otel-counts-agree']) {
  const i = r.invariants.find((x) => x.name === name);
  if (!i || i.pass !== 'unknown' || !/npm install --save-dev @opentelemetry/.test(i.notHere ?? '')) { console.error('packed-install: ' + name + ' did not say what to install: ' + JSON.stringify(i)); process.exit(1); }
}"

step "a peer engine: without it, --engine exits 2 with the npm install line; installed beside, worker-crash runs against it"
code=0
npx --no-install stampede-queue scenario worker-crash --engine graphile-worker 2> peer-missing.err || code=$?
if [[ $code -ne 2 ]] || ! grep -q 'npm install graphile-worker@' peer-missing.err; then
  echo "packed-install: --engine graphile-worker without graphile-worker exited $code (expected 2 with the npm install line):" >&2
  cat peer-missing.err >&2
  exit 1
fi
npm install --no-audit --no-fund --loglevel=error "graphile-worker@$(node -p "require('$repo/package.json').devDependencies['graphile-worker']")"
code=0
npx --no-install stampede-queue scenario worker-crash --engine graphile-worker --duration 12 --rate 20 --seed 11 --json --out reports/peer > peer.json || code=$?
# graphile-worker keeps a killed worker's jobs locked for 4 hours (its docs): the run may end inconclusive (3), never failed.
if [[ $code -ne 0 && $code -ne 3 ]]; then
  echo "packed-install: scenario worker-crash --engine graphile-worker exited $code; expected 0 or 3" >&2
  exit 1
fi
node -e "const r = require('./peer.json'); if (!/engine: graphile-worker/.test(r.scenario.description)) { console.error('packed-install: the peer run did not run graphile-worker: ' + r.scenario.description); process.exit(1); }"

step "packed-install test passed in $((SECONDS - started)) s"
