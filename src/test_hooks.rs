//! The `BCUDA_TEST_*` environment variables, read here and nowhere else. They are hooks for
//! the GPU checks and benchmarks (the modes of bench/run): they force paths that
//! real inputs rarely take (small stacks, a failed batch, GPU or index chunk) or set what a
//! sweep varies, without a tuning run. Unset, each leaves bcuda as documented; none is an
//! option a user needs.

use anyhow::{bail, Result};

use crate::gpu::InexactSwitches;

/// `BCUDA_TEST_BATCH_READS=N`: reads per `aln` batch instead of bwa's (sweeps of the
/// pipeline's fill and drain against its per-batch cost). `None` when unset, not a number, or 0.
pub(crate) fn batch_reads() -> Option<usize> {
    std::env::var("BCUDA_TEST_BATCH_READS").ok().and_then(|v| v.parse().ok()).filter(|&n| n > 0)
}

/// `BCUDA_TEST_INEXACT_SWITCHES="name=value ..."` (spaces or commas between): the inexact
/// kernels' switches, set over their defaults (bench/run identity times `aln` with each).
pub(crate) fn inexact_switches() -> Result<InexactSwitches> {
    let mut sw = InexactSwitches::default();
    if let Ok(v) = std::env::var("BCUDA_TEST_INEXACT_SWITCHES") {
        for a in v.split(|c: char| c.is_whitespace() || c == ',').filter(|a| !a.is_empty()) {
            sw.set(a).map_err(|e| anyhow::anyhow!("BCUDA_TEST_INEXACT_SWITCHES: {e}"))?;
        }
    }
    Ok(sw)
}

/// `BCUDA_TEST_FIRST_PASS=teams`: pass 1 gives every read to the team passes from the start
/// (its rule given up), for the team passes' time on reads pass 1 would keep. Unset: the rule.
pub(crate) fn first_pass_to_teams() -> Result<bool> {
    match std::env::var("BCUDA_TEST_FIRST_PASS") {
        Err(_) => Ok(false),
        Ok(v) if v == "teams" => Ok(true),
        Ok(v) => bail!("BCUDA_TEST_FIRST_PASS={v}: expected teams"),
    }
}

/// `BCUDA_TEST_LADDER=passes,2,3` (or `passes+2+3`, as bench/run ab's hooks take it): the rungs
/// of a speculative ladder with these guesses, then bwa's limits, inside the team passes, with
/// the `-m` guard (`GpuAligner::ladder_in_passes`). `None` when unset, else the guesses.
pub(crate) fn ladder() -> Result<Option<Vec<i32>>> {
    let Ok(v) = std::env::var("BCUDA_TEST_LADDER") else { return Ok(None) };
    let words: Vec<&str> = v.split([',', '+']).map(str::trim).collect();
    let Some((&"passes", guesses)) = words.split_first() else {
        bail!("BCUDA_TEST_LADDER={v}: the rungs run inside the team passes: expected passes,2,3")
    };
    match guesses.iter().map(|g| g.parse::<i32>()).collect::<Result<Vec<_>, _>>() {
        Ok(g) if !g.is_empty() && g.iter().all(|&x| x >= 1) => Ok(Some(g)),
        _ => bail!("BCUDA_TEST_LADDER={v}: expected guesses of 1 or more, e.g. passes,2,3"),
    }
}

/// `BCUDA_TEST_RUNG_GUARD=0|1|2|3|4`: the `-m` guard of the rungs in the passes, for measuring
/// its cost: 0 none (not exact where `-m` stops bwa's search), 1 the entry points counted and
/// every answer taken, 2 the guard with bwa's own D arrays, 3 and with the further D arrays where
/// those leave the bound over `-m` (as when unset), 4 the work of 3 and every answer taken.
pub(crate) fn rung_guard() -> Result<Option<u32>> {
    match std::env::var("BCUDA_TEST_RUNG_GUARD") {
        Err(_) => Ok(None),
        Ok(v) => match v.parse::<u32>() {
            Ok(g) if g <= 4 => Ok(Some(g)),
            _ => bail!("BCUDA_TEST_RUNG_GUARD={v}: expected 0 to 4"),
        },
    }
}

/// `BCUDA_TEST_LINEINFO` (any value): the kernels are compiled with source lines
/// (`-lineinfo`), so that Nsight Compute's source counters name the lines where warps stall
/// (`NCU=1 bench/run speed`).
pub(crate) fn line_info() -> bool {
    std::env::var_os("BCUDA_TEST_LINEINFO").is_some()
}

/// `BCUDA_TEST_SLOTS=N`: batches in flight per GPU, 2 to 8 (`default` when unset).
pub(crate) fn slots(default: usize) -> Result<usize> {
    match std::env::var("BCUDA_TEST_SLOTS") {
        Err(_) => Ok(default),
        Ok(v) => v
            .parse()
            .ok()
            .filter(|n| (2..=8).contains(n))
            .ok_or_else(|| anyhow::anyhow!("BCUDA_TEST_SLOTS={v}: expected 2 to 8 batches in flight")),
    }
}

/// `BCUDA_TEST_HITS_PER_READ=N`: hit slots per read instead of `default` (1 to 16), so that
/// the long hit list's paths run on many reads: pass 1 hands on a read with more hits, the team
/// passes list its hits with the long ones.
pub(crate) fn hits_per_read(default: usize) -> Result<usize> {
    match std::env::var("BCUDA_TEST_HITS_PER_READ") {
        Err(_) => Ok(default),
        Ok(v) => v
            .parse()
            .ok()
            .filter(|n| (1..=default).contains(n))
            .ok_or_else(|| anyhow::anyhow!("BCUDA_TEST_HITS_PER_READ={v}: expected 1 to {default} hits a read")),
    }
}

/// `BCUDA_TEST_NO_HOST_ROOM=1`: the host's copies of the packed and long hits hold nothing and
/// never grow, so that every batch's hits are read at collect from the GPU
/// (`compact_hits::HostRoom`), the path of batches with more hits than the room.
pub(crate) fn no_host_room() -> Result<bool> {
    match std::env::var("BCUDA_TEST_NO_HOST_ROOM") {
        Err(_) => Ok(false),
        Ok(v) if v == "1" => Ok(true),
        Ok(v) => Err(anyhow::anyhow!("BCUDA_TEST_NO_HOST_ROOM={v}: expected 1")),
    }
}

/// `BCUDA_TEST_STACKS=a,b[,c]`: stack entries per pass of the inexact search (one to
/// `max_passes` sizes), forced small so that the checks show that every pass and the CPU give
/// the same hits. `None` when unset.
pub(crate) fn stacks(max_passes: usize) -> Result<Option<Vec<usize>>> {
    match std::env::var("BCUDA_TEST_STACKS") {
        Err(_) => Ok(None),
        Ok(v) => match v.split(',').map(str::parse).collect::<Result<Vec<usize>, _>>() {
            Ok(e) if (1..=max_passes).contains(&e.len()) && e.iter().all(|&x| x > 0) => Ok(Some(e)),
            _ => bail!("BCUDA_TEST_STACKS={v}: expected one to {max_passes} stack sizes (entries), e.g. 64,4096"),
        },
    }
}

/// `BCUDA_TEST_FAIL_BATCH=N`: the N-th batch (from 1) fails, `N..`: every batch from the N-th
/// on (a GPU that dies); `BCUDA_TEST_FAIL_GPU=ORDINAL` keeps that to one GPU. The checks use
/// them to show that a failed batch, or GPU, loses no read. For GPU `ordinal`: the first
/// failing batch, and whether every later one fails too.
pub(crate) fn failing_batches(ordinal: usize) -> Option<(usize, bool)> {
    let only = std::env::var("BCUDA_TEST_FAIL_GPU").ok().and_then(|v| v.parse::<usize>().ok());
    if only.is_some_and(|o| o != ordinal) {
        return None;
    }
    let v = std::env::var("BCUDA_TEST_FAIL_BATCH").ok()?;
    match v.strip_suffix("..") {
        Some(from) => Some((from.parse().ok()?, true)),
        None => Some((v.parse().ok()?, false)),
    }
}

/// `BCUDA_TEST_FAIL_INDEX_CHUNK=N`: chunk N (from 1) of `index --gpu`'s sort fails on purpose
/// on the GPU, so that the check sees the CPU take over with the same files.
pub(crate) fn failing_index_chunk() -> Option<usize> {
    std::env::var("BCUDA_TEST_FAIL_INDEX_CHUNK").ok()?.parse().ok()
}
