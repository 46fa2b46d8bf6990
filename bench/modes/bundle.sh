# bench/run bundle: what a CUDA host needs beside this checkout, built here into bundle/
# (ignored by git): the release bcuda and bcuda-dev, the ancient-DNA simulator (sim_adna),
# Debian's bwa, dwgsim and art_illumina (with the GSL libraries art_illumina needs, in
# bundle/lib), the test data gzip'd, and the commit (bundle/commit, for the tables). The
# harness runs on the CUDA host from a copy of the checkout with bundle/ beside bench/.
# BASE=COMMIT adds bundle/bcuda-base, that commit's bcuda, for `CONFIGS="base:base: new:new:"
# bench/run ab`; BUILDS="NAME=COMMIT ..." adds bundle/bcuda-NAME for each (`CONFIGS="... x:NAME:"`),
# and NAME=COMMIT:PATCH that commit with a patch of this checkout applied (`git apply`; e.g. one
# of bench/variants/).
# SLIM=1 leaves out art_illumina (`repeat` only) and the 76 and 250 bp reads (`identity`'s full
# run only), room for two more builds under the limit.
mode_main() {
    set -e
    local target=${CARGO_TARGET_DIR:-$ROOT/target} tmp L
    ./scripts/get-data.sh > /dev/null
    cargo build --release --quiet -p bcuda -p bcuda-dev --bins --example sim_adna
    rm -rf "$C" && mkdir -p "$C/data" "$C/lib"
    cp "$target/release/bcuda" "$target/release/bcuda-dev" "$target/release/examples/sim_adna" "$C/"
    strip "$C/bcuda" "$C/bcuda-dev" "$C/sim_adna"
    tmp=$(mktemp -d)
    (cd "$tmp" && apt-get download bwa dwgsim art-nextgen-simulation-tools libgsl27 libgslcblas0 > /dev/null 2>&1 \
        && for deb in *.deb; do dpkg -x "$deb" root; done)
    cp "$tmp"/root/usr/bin/{bwa,dwgsim} "$C/"
    [ -n "${SLIM:-}" ] || cp "$tmp"/root/usr/bin/art_illumina "$C/"
    # Under their sonames, as plain files (links may not travel).
    cp -L "$tmp"/root/usr/lib/x86_64-linux-gnu/{libgsl.so.27,libgslcblas.so.0} "$C/lib/"
    rm -rf "$tmp"
    echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo -dirty)" > "$C/commit"
    for g in lambda ecoli536; do
        gzip -c "data/$g.fa" > "$C/data/$g.fa.gz"
        gzip -c "data/${g}_art.fq" > "$C/data/${g}_art.fq.gz"
    done
    for L in 36 150 $([ -n "${SLIM:-}" ] || echo 76 250); do python3 scripts/sim-reads.py data/ecoli536.fa $L 20000 $L | gzip > "$C/data/sim$L.fq.gz"; done
    [ -z "${BASE:-}" ] || bundle_build base "$BASE" "$target"
    for L in ${BUILDS:-}; do bundle_build "${L%%=*}" "${L#*=}" "$target"; done
    du -sh "$C"
    # Kept under 64 MiB, so that it copies to a CUDA host quickly.
    [ "$(du -sm "$C" | cut -f1)" -lt 64 ] || { echo "bundle is over 64 MiB" >&2; return 1; }
}

# bcuda at commit $2 (COMMIT or COMMIT:PATCH) as bundle/bcuda-$1, built in a worktree of its own
# with its own target folder under $3 (the checkout's build stays as it is; one folder for every
# such build, so that the next reuses what it can).
bundle_build() {
    local name=$1 commit=${2%%:*} patch tree built=0
    patch=$([ "$2" = "$commit" ] || echo "$ROOT/${2#*:}")
    tree=$(mktemp -d)
    git worktree add --detach "$tree" "$commit" > /dev/null
    (cd "$tree" && { [ -z "$patch" ] || git apply "$patch"; } && CARGO_TARGET_DIR="$3/base" cargo build --release --quiet -p bcuda --bin bcuda) || built=$?
    git worktree remove --force "$tree"
    [ "$built" = 0 ] || { echo "bundle: bcuda-$name ($2) did not build" >&2; return 1; }
    cp "$3/base/release/bcuda" "$C/bcuda-$name"
    strip "$C/bcuda-$name"
}
