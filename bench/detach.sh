# Sourced by bench/run: runs longer than one command may run. `bench/run --detach MODE ARGS`
# copies the checkout (with bundle/) to LONG_DIR (default /tmp/bench-long) and starts the
# mode there detached (setsid), its results in LONG_DIR/out, its many-core part held until
# `bench/run wait SECS` (repeated as needed) lets it go; wait returns when the run's log ends
# with "done", the run exits or SECS pass, and merges the results of a finished run into the
# results folder (RESULTS or --out; tables and logs appended to, once).
L=${LONG_DIR:-/tmp/bench-long}

detach_start() { # bench/run's arguments (MODE ARGS, maybe --cpu first)
    # A run before in this folder leaves its log, exit status and go-ahead: wait must see this one's.
    rm -rf "$L/repo" "$L/out" "$L/exit" "$L/go" "$L/log" "$L/merged"
    mkdir -p "$L/repo" "$L/out" || die "cannot write $L"
    tar -C "$ROOT" --exclude=./target --exclude=./.git --exclude=./data -cf - . | tar -C "$L/repo" -xf - || die "copy to $L failed"
    [ -d "$ROOT/data" ] && ln -s "$ROOT/data" "$L/repo/data"
    # The copy has no git history: the commit of binaries built from this checkout goes with it.
    [ -s "$C/commit" ] || export COMMIT=${COMMIT:-$(checkout_commit)}
    (
        cd "$L/repo" && RESULTS=$L/out WAIT_FOR=$L/go DETACHED_LOG=$L/log SORT_GB=${SORT_GB:-8} \
            setsid bash -c 'bench/run "$@"; echo $? > "$0/exit"' "$L" "$@" > "$L/stdout.txt" 2>&1 < /dev/null &
    )
    echo "started bench/run $* in $L; then: bench/run wait SECS"
}

detach_wait() { # SECS
    [ -d "$L/out" ] || die "no detached run in $L (bench/run --detach MODE ...)"
    touch "$L/go"
    local end=$((SECONDS + ${1:-585})) log=
    # Until the log's "done", the run's end (a failure may end without it) or SECS.
    while [ $SECONDS -lt $end ] && [ ! -e "$L/exit" ]; do
        log=$(cat "$L/log" 2> /dev/null)
        [ -n "$log" ] && grep -q '^done' "$log" && break
        sleep 5
    done
    log=$(cat "$L/log" 2> /dev/null)
    sleep 1  # the exit status follows "done"
    echo "--- after $SECONDS s:"
    [ -n "$log" ] && cat "$log"
    tail -5 "$L/stdout.txt"
    free -g | head -2
    df -h /tmp | tail -1
    if [ -e "$L/exit" ]; then
        echo "the run exited with status $(cat "$L/exit")"
        merge_results "$L/out" "${RESULTS:-$ROOT/bench/results}"
    else
        echo "still running: bench/run wait SECS again"
    fi
}

# Every file of SRC into DST: new ones copied, tables (.tsv) and logs (.log) that DST has
# already appended to (a table without its header line). Once per run.
merge_results() { # SRC DST
    [ -e "$L/merged" ] && { echo "results already merged"; return; }
    local f rel
    (cd "$1" && find . -type f) | while read -r rel; do
        f=$2/${rel#./}
        mkdir -p "$(dirname "$f")"
        if [ -s "$f" ] && [[ $rel == *.tsv ]]; then tail -n +2 "$1/$rel" >> "$f"
        elif [ -s "$f" ] && [[ $rel == *.log ]]; then cat "$1/$rel" >> "$f"
        else cp "$1/$rel" "$f"
        fi
        echo "results: $f"
    done
    touch "$L/merged"
}
