#!/usr/bin/env bash
# Index benchmark: wall time and peak memory of `bcuda index` vs `bwa index`, side by side, on
# E. coli 536 and a seeded synthetic 100 Mbp genome (scripts/synth-genome.py).
#   bench/index.sh [SIZE_MBP]      (default 100)
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-100}
./scripts/get-data.sh >/dev/null
cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -s "data/synth${size}.fa" ] || python3 scripts/synth-genome.py "$size" 1 > "data/synth${size}.fa"
measure() { # tool genome -> "seconds peak_MiB"
    local dir=$work/$1; mkdir -p "$dir"; cp "$2" "$dir/ref.fa"
    if [ "$1" = bcuda ]; then cmd=(target/release/bcuda index -q "$dir/ref.fa"); else cmd=(bwa index "$dir/ref.fa"); fi
    /usr/bin/time -f "%e %M" -o "$dir/time" "${cmd[@]}" >/dev/null 2>&1
    read -r secs kib < "$dir/time"
    echo "$secs $((kib / 1024))"
}
echo "| genome | bases | bcuda s | bcuda peak MiB | bwa s | bwa peak MiB | identical files |"
echo "|---|---|---|---|---|---|---|"
for g in data/ecoli536.fa "data/synth${size}.fa"; do
    read -r bs bm <<< "$(measure bcuda "$g")"
    read -r ws wm <<< "$(measure bwa "$g")"
    same=yes
    for e in pac ann amb bwt sa; do cmp -s "$work/bcuda/ref.fa.$e" "$work/bwa/ref.fa.$e" || same=no; done
    bases=$(grep -v '>' "$g" | tr -d '\n' | wc -c)
    echo "| $(basename "$g") | $bases | $bs | $bm | $ws | $wm | $same |"
    rm -rf "$work/bcuda" "$work/bwa"
done
echo "(machine: $(nproc) cores; bcuda uses all of them, bwa index one)"
