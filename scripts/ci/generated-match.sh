#!/usr/bin/env bash
# The generated files match their sources: everything `npm run gen`, `npm run docs:internal` and
# `npm run gen:sdk` write is made again in a scratch folder and compared with what is committed,
# and buf lints the contracts and finds no breaking change against the previous commit. Nothing in
# the tree is written, so .ci/run runs this beside the tests, which read those files (made in
# place, a file being rewritten could be read half-written).
set -euo pipefail
cd "$(dirname "$0")/../.."

# The project's tools first, as `npm run` puts them: its Node 24 (the machine's Node cannot run
# the TypeScript scripts), buf and buf's protoc-gen-es plugin.
export PATH="$PWD/node_modules/.bin:$PATH"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
failed=0
differs() { # committed, made again, what to run
  if ! diff -r "$1" "$2" >"$scratch/diff" 2>&1; then
    head -n 40 "$scratch/diff"
    echo "$1 is out of date: run $3 and commit."
    failed=1
  fi
}

(cd proto && buf lint && buf generate --output "$scratch/proto")
differs packages/contracts/gen "$scratch/packages/contracts/gen" "npm run gen"
node scripts/gen-enum-words.ts "$scratch/enum-words.gen.ts" >/dev/null
differs packages/platform/src/enum-words.gen.ts "$scratch/enum-words.gen.ts" "npm run gen"

node scripts/internal-api-docs.ts "$scratch/internal-api.md"
differs docs/internal-api.md "$scratch/internal-api.md" "npm run docs:internal"

mkdir -p "$scratch/sdk-gen"
node scripts/sdk-gen.ts "$scratch/sdk-gen" >/dev/null
differs packages/sdk/src/gen "$scratch/sdk-gen" "npm run gen:sdk"

if git rev-parse -q --verify HEAD~1 >/dev/null && git cat-file -e HEAD~1:proto/buf.yaml 2>/dev/null; then
  (cd proto && buf breaking --against "../.git#ref=HEAD~1,subdir=proto")
fi
exit "$failed"
