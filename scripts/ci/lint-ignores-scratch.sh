#!/usr/bin/env bash
# Proves that the checks which walk the checkout (biome, tsc, the test runner's globs) stay out of
# the scratch folder `.tmp/`, whatever lands there: an image build (its rootfs has the host's /proc
# mounted while mmdebstrap runs), backups, generated files. A fresh machine builds the LXD images in
# the background exactly while lint runs, so a check that walked into them failed there only.
# The probe plants what such a build leaves (a file that does not parse, a link into /proc, a file
# that cannot be read) and runs lint and the typecheck's file list with it in place.
set -euo pipefail
cd "$(dirname "$0")/../.."

probe=".tmp/ci-scratch-probe.$$"
trap 'rm -rf --one-file-system "$probe"' EXIT
mkdir -p "$probe/rootfs/etc"
echo 'this is not ( TypeScript' >"$probe/rootfs/broken.ts"
echo '{ not json' >"$probe/rootfs/etc/broken.json"
ln -s /proc "$probe/rootfs/proc"
: >"$probe/rootfs/unreadable.ts"
chmod 000 "$probe/rootfs/unreadable.ts"

npx biome check . >/dev/null 2>"$probe.err" || {
  cat "$probe.err" >&2
  rm -f "$probe.err"
  echo "lint walked into .tmp/: it must ignore the scratch folder (biome.json files.includes and vcs.useIgnoreFile)" >&2
  exit 1
}
rm -f "$probe.err"
# grep reads the whole list (no -q): stopping early would end tsc by SIGPIPE, and under pipefail
# that failed the condition even when a file matched.
if npm run -s typecheck -- --listFilesOnly | grep '/\.tmp/' >/dev/null; then
  echo "the typecheck reads files under .tmp/: tsconfig.json's include must leave it out" >&2
  exit 1
fi
# The build itself writes outside the checkout (scripts/lxd/images.sh refuses a folder inside it).
if grep -q '^out=\.tmp' scripts/lxd/images.sh; then
  echo "scripts/lxd/images.sh builds inside the checkout" >&2
  exit 1
fi
echo "lint and typecheck ignore .tmp/ (probe with a broken file, a link into /proc and an unreadable file)"
