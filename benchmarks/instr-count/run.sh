#!/bin/sh
# Instructions per typed list call and per submission of the client with no tracing subscriber and no
# meter provider (issue 37 point 6, "feature off ÷ before this issue"), counted by callgrind inside the
# calls' polls only (main.rs). Usage: benchmarks/instr-count/run.sh [REV] (default 74048c1, the commit
# before issue 37). Builds a standalone crate under target/instr-count/ against REV's tree (a git
# worktree) and one against this tree (store-api's default features: otel-metrics off), offline.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rev=${1:-74048c1}
out=$root/target/instr-count
mkdir -p "$out"
[ -d "$out/tree-$rev" ] || git -C "$root" worktree add --detach "$out/tree-$rev" "$rev"
for side in before now; do
    src=$([ $side = before ] && echo "$out/tree-$rev" || echo "$root")
    mkdir -p "$out/$side/src"
    sed "s#@ROOT@#$src#" "$here/Cargo.toml.in" > "$out/$side/Cargo.toml"
    cp "$here/main.rs" "$out/$side/src/main.rs"
    cp "$here/common.rs" "$out/$side/src/common.rs"
    cp "$src/Cargo.lock" "$out/$side/Cargo.lock"
    (cd "$out/$side" && CARGO_TARGET_DIR="$out/target" cargo build --offline --release -q &&
        cp "$out/target/release/instr-bench" "$out/$side/instr-bench")
done
count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect='*Counted*' "$@" 2>&1 |
        sed -n 's/.*Collected : //p'
}
for kind in list submit; do
    for side in before now; do
        small=$(count "$out/$side/instr-bench" $kind 100)
        large=$(count "$out/$side/instr-bench" $kind 300)
        echo "$kind $side $(( (large - small) / 200 )) instructions per call"
    done
done
