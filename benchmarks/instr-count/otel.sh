#!/bin/sh
# Instructions per call with the OpenTelemetry layer and meter installed ÷ without (issue 37 point 6),
# counted by callgrind over the whole process (otel/main.rs), and the floor: what the layer costs for
# two spans with no attributes around a bare reqwest POST. (N=350 − N=50) ÷ 300 per figure.
# Usage: benchmarks/instr-count/otel.sh. Builds a standalone crate under target/instr-count/otel.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/target/instr-count/otel
mkdir -p "$out/src"
sed "s#@ROOT@#$root#" "$here/otel/Cargo.toml.in" > "$out/Cargo.toml"
cp "$here/otel/main.rs" "$out/src/main.rs"
cp "$here/common.rs" "$out/src/common.rs"
cp "$root/Cargo.lock" "$out/Cargo.lock"
(cd "$out" && CARGO_TARGET_DIR="$root/target/instr-count/target" cargo build --offline --release -q)
bin=$root/target/instr-count/target/release/instr-bench-otel
count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 | sed -n 's/.*Collected : //p'
}
per_call() {
    small=$(count "$bin" "$1" "$2" 50)
    large=$(count "$bin" "$1" "$2" 350)
    echo $(( (large - small) / 300 ))
}
ratio() { echo "scale=3; $1 / $2" | bc; }
for kind in submit list; do
    none=$(per_call none $kind)
    with=$(per_call installed $kind)
    echo "$kind: none $none, installed $with, ratio $(ratio "$with" "$none")"
done
# The floor of a submission (a list's is the same spans against a call ten times as long).
bare=$(per_call none bare_submit)
spanned=$(per_call installed spanned_submit)
echo "floor: a bare POST $bare, in two spans with the layer $spanned, ratio $(ratio "$spanned" "$bare"), the spans alone $((spanned - bare))"
