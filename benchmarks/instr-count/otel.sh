#!/bin/sh
# Instructions per call with the OpenTelemetry layer and meter installed ÷ without (issue 37 point 6),
# counted by callgrind over the whole process (otel/main.rs), and the floor: what the layer costs for
# two spans with no attributes around a bare reqwest POST. (N=350 − N=50) ÷ 300 per figure.
# `otel.sh cpu` measures CPU time instead (user and system, every thread: `perf stat -e task-clock`),
# which callgrind does not see in the kernel: (N=2200 − N=200) ÷ 2000, the median of 7 alternating runs.
# Usage: benchmarks/instr-count/otel.sh [cpu]. Builds a standalone crate under target/instr-count/otel.
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
if [ "${1:-}" = cpu ]; then
    cpu() { perf stat -x, -e task-clock "$bin" "$@" 2>&1 >/dev/null | sed -n 's/^\([0-9.]*\),msec,task-clock.*/\1/p'; }
    configs="none:bare_submit installed:spanned_submit none:submit installed:submit"
    for config in $configs; do : > "$out/$config.cpu"; done
    for _ in 1 2 3 4 5 6 7; do
        for config in $configs; do
            side=${config%%:*} kind=${config#*:}
            small=$(cpu "$side" "$kind" 200)
            large=$(cpu "$side" "$kind" 2200)
            echo "scale=2; ($large - $small) / 2" | bc >> "$out/$config.cpu"
        done
    done
    med() { sort -n "$out/$1.cpu" | sed -n 4p; }
    echo "CPU µs per call, medians of 7: a bare POST $(med none:bare_submit), in two spans with the layer $(med installed:spanned_submit), ratio $(ratio "$(med installed:spanned_submit)" "$(med none:bare_submit)")"
    echo "  orders().submit: none $(med none:submit), installed $(med installed:submit), ratio $(ratio "$(med installed:submit)" "$(med none:submit)")"
    exit 0
fi
for kind in submit list; do
    none=$(per_call none $kind)
    with=$(per_call installed $kind)
    echo "$kind: none $none, installed $with, ratio $(ratio "$with" "$none")"
done
# The floor of a submission (a list's is the same spans against a call ten times as long).
bare=$(per_call none bare_submit)
spanned=$(per_call installed spanned_submit)
echo "floor: a bare POST $bare, in two spans with the layer $spanned, ratio $(ratio "$spanned" "$bare"), the spans alone $((spanned - bare))"
