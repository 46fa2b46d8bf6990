//! Bounds guards on the real exact_match kernel: every array with a known bound is guarded,
//! patches cannot remove or bypass the guards, and the output is deterministic.

use std::collections::BTreeSet;

use bcuda_autotune::bounds::{guard, PARAM_BOUNDS, PRELUDE};
use bcuda_autotune::genome::random_patch;
use bcuda_autotune::grammar::{Grammar, LineKind};
use bcuda_autotune::patch::{apply, ForPart, Patch};
use rand::rngs::StdRng;
use rand::SeedableRng;

fn kernel() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cuda/exact_match.cu");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn line_of(g: &Grammar, needle: &str) -> usize {
    g.lines.iter().position(|l| l.text.contains(needle)).unwrap_or_else(|| panic!("no line with {needle}"))
}

/// Subscripts and BWT pointer additions of a variant's code that are not guarded, declarations
/// of arrays excepted.
fn unguarded(variant: &str) -> Vec<String> {
    let body = variant.strip_prefix(PRELUDE).expect("the prelude is at the top");
    let mut bad = Vec::new();
    for line in body.lines() {
        let code = line.split("//").next().unwrap();
        if code.trim_start().starts_with('#') {
            continue;
        }
        let b = code.as_bytes();
        for (at, _) in code.match_indices('[') {
            let name_start =
                code[..at].trim_end().rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
            let name = code[name_start..at].trim_end();
            let declaration = code.trim_start().starts_with("u32 ") || code.trim_start().starts_with("__shared__");
            let guarded = code[at + 1..].starts_with("gi_clamp(");
            // `((const u8 *)&word)[...]` indexes the bytes of a scalar.
            let of_cast = b[..at].last() == Some(&b')');
            // `slots[..][w]`: the second bracket follows the first's `]`.
            let second = name.is_empty() && b[..at].last() == Some(&b']');
            if !(guarded || declaration || of_cast || second) {
                bad.push(code.trim().to_string());
            }
        }
        for pointer in ["words + ", "reads + "] {
            for (at, _) in code.match_indices(pointer) {
                if !code[at + pointer.len()..].starts_with("gi_clamp(") {
                    bad.push(code.trim().to_string());
                }
            }
        }
    }
    bad
}

#[test]
fn every_array_of_the_kernel_is_guarded() {
    let g = Grammar::parse(&kernel());
    let out = apply(&g, &[]);
    assert_eq!(unguarded(&out), Vec::<String>::new());
    for expected in [
        // local and __shared__ arrays, both dimensions
        "local[gi_clamp(w, MAX_READ_WORDS)] = ",
        "u32 word = local[gi_clamp(j >> 3, MAX_READ_WORDS)];",
        "slots[gi_clamp(first + m, BLOCK_W)][gi_clamp(w, 16)] = ",
        // the struct member array of the block cache
        "return cache.w[gi_clamp(i, 16)];",
        "cache.w[gi_clamp(i, 16)] = v;",
        // rows of the shared blocks through local pointers
        "const u32 *blk = slots[gi_clamp(threadIdx.x, BLOCK_W)];",
        "((u64)blk[gi_clamp(2 * c, 16)] | ((u64)blk[gi_clamp(2 * c + 1, 16)] << 32))",
        "(u64)bb[gi_clamp(8 + 2 * j, 16)]",
        // the BWT, its bound passed down from seq_len
        "return words[gi_clamp(i, gi_n_words)];",
        "return __ldg(words + gi_clamp(i, gi_n_words));",
        "const u32 *blk = words + gi_clamp(block * OCC_BLOCK_WORDS, gi_n_words - OCC_BLOCK_WORDS + 1);",
        "__ldg((const uint4 *)blk + gi_clamp(q, OCC_BLOCK_WORDS * sizeof(*blk) / sizeof(const uint4)))",
        "__ldg((const uint2 *)blk + gi_clamp(q, OCC_BLOCK_WORDS * sizeof(*blk) / sizeof(const uint2)))",
        "u32 load_bwt_word(const u32 *words, u64 gi_n_words, u64 i)",
        "cached_occ(words, GI_BWT_WORDS(seq_len), primary, k - 1, c, cache)",
        "load_block(words, gi_n_words, block, cache)",
        "group_search(words, GI_BWT_WORDS(seq_len), primary, seq_len, l2, 5, reads, n_read_words,",
        "load_read_word(reads, n_read_words, read_word_index(rr, start, w))",
        "load_read_word(reads, gi_n_reads, read_word_index(rr, start, j >> 3))",
        // L2 and the per-read arrays
        "k = l2[gi_clamp(c, 5)] + ok + 1;",
        "k = l2[gi_clamp(c, gi_n_l2)] + ok + 1;",
        "u32 len = read_len[gi_clamp(rr, n_reads)];",
        "u64 start = read_start[gi_clamp(rr, n_reads)];",
        "out_k[gi_clamp(r, n_reads)] = has_n ? 0 : k;",
        "out_l[gi_clamp(r, n_reads)] = has_n ? 0 : l;",
    ] {
        assert!(out.contains(expected), "missing: {expected}\n{out}");
    }
    // The packed reads, bounded by their length in words (a kernel argument).
    assert!(out.contains("return reads[gi_clamp(index, gi_n_reads)];"), "{out}");
    assert!(out.contains("return __ldg(reads + gi_clamp(index, gi_n_reads));"), "{out}");
    assert!(out.contains("u32 load_read_word(const u32 *reads, u64 gi_n_reads, u64 index)"), "{out}");
    // Declarations keep their sizes.
    assert!(
        out.contains("u32 local[MAX_READ_WORDS];")
            && out.contains("__shared__ u32 slots[BLOCK_W][16];")
            && out.contains("u32 w[16];")
    );
}

#[test]
fn parameter_bounds_name_kernel_pointers_passed_on_by_name() {
    let src = kernel();
    let sig: String =
        src.lines().skip_while(|l| !l.contains("__global__")).take_while(|l| !l.starts_with('{')).collect();
    for (name, _, _) in PARAM_BOUNDS {
        assert!(
            sig.contains(&format!("*__restrict__ {name},")) || sig.contains(&format!("*__restrict__ {name})")),
            "{name} is not a pointer parameter of the kernel"
        );
    }
    // Every call that takes a bounded pointer passes it under its own name, so the bound that
    // follows it is the caller's (never 0, "unknown").
    let out = apply(&Grammar::parse(&src), &[]);
    for (name, _, _) in PARAM_BOUNDS {
        assert!(
            !out.contains(&format!("{name}, 0,")) && !out.contains(&format!("{name}, 0)")),
            "{name} passed without its bound"
        );
    }
    assert_eq!(
        out.matches(", u64 gi_n_words").count(),
        5,
        "load_bwt_word, load_block, cached_occ, group_occ, group_search"
    );
}

#[test]
fn out_of_range_patches_are_still_guarded() {
    let g = Grammar::parse(&kernel());
    // `w < 16` replaced by `m < cache_threads`: w can run past the 16 words of a slot.
    let inner = line_of(&g, "for (u32 w = member; w < 16; w += cache_threads)");
    let outer = line_of(&g, "for (u32 m = 0; m < cache_threads; ++m)");
    let p = Patch::ForPart { line: inner, from: outer, part: ForPart::Cond };
    assert!(p.valid(&g));
    let out = apply(&g, &[p]);
    let line = out.lines().find(|l| l.contains("for (u32 w = member;")).unwrap();
    assert!(
        line.contains("(m < cache_threads)") && line.contains("slots[gi_clamp(first + m, BLOCK_W)][gi_clamp(w, 16)]"),
        "{line}"
    );
    // The N test replaced by another condition: c = 3 - b can be negative and index L2 below 0.
    let n_test = g.lines.iter().rposition(|l| l.text.trim() == "if (b > 3) {").unwrap();
    let p = Patch::IfCond { line: n_test, from: line_of(&g, "if (k > l) break;") };
    assert!(p.valid(&g));
    let out = apply(&g, &[p]);
    assert!(out.contains("if (k > l) {") && out.contains("k = l2[gi_clamp(c, 5)] + ok + 1;"));
    // A statement replaced by another: the copy is guarded as the original is.
    let p = Patch::Replace { line: line_of(&g, "k = l2[c] + ok + 1;"), with: line_of(&g, "l = l2[c] + ol;") };
    assert!(p.valid(&g));
    let out = apply(&g, &[p]);
    assert_eq!(out.matches("l = l2[gi_clamp(c, gi_n_l2)] + ol;").count(), 2);
    assert_eq!(unguarded(&out), Vec::<String>::new());
    // A statement of group_search copied into the kernel gets the kernel's bound there.
    let p = Patch::Insert {
        before: line_of(&g, "u64 ol = side ? mine : other;"),
        from: line_of(&g, "k = l2[c] + ok + 1;"),
    };
    assert!(p.valid(&g));
    let out = apply(&g, &[p]);
    assert_eq!(out.matches("k = l2[gi_clamp(c, 5)] + ok + 1;").count(), 2);
    assert_eq!(unguarded(&out), Vec::<String>::new());
}

fn kind(p: &Patch) -> &'static str {
    match p {
        Patch::Delete { .. } => "delete",
        Patch::Replace { .. } => "replace",
        Patch::Insert { .. } => "insert",
        Patch::IfCond { .. } => "if",
        Patch::ForPart { .. } => "for",
        Patch::Unroll { .. } => "unroll",
        Patch::Restrict(_) => "restrict",
        Patch::LaunchBounds(_) => "launch_bounds",
    }
}

#[test]
fn guards_survive_every_patch_kind() {
    let g = Grammar::parse(&kernel());
    let mut rng = StdRng::seed_from_u64(5);
    let patches: Vec<Patch> = (0..3000).filter_map(|_| random_patch(&g, &mut rng)).collect();
    let kinds: BTreeSet<&str> = patches.iter().map(kind).collect();
    assert_eq!(kinds.len(), 8, "{kinds:?}");
    let plain = apply(&g, &[]);
    let n_plain = plain.matches("gi_clamp(").count();
    for p in &patches {
        let out = apply(&g, std::slice::from_ref(p));
        assert_eq!(unguarded(&out), Vec::<String>::new(), "{p:?}");
        assert_eq!(out.matches(PRELUDE).count(), 1);
        // A patch adds or removes whole statements, never a guard inside a kept one.
        if matches!(
            p,
            Patch::Unroll { .. }
                | Patch::Restrict(_)
                | Patch::LaunchBounds(_)
                | Patch::ForPart { .. }
                | Patch::IfCond { .. }
        ) {
            assert_eq!(out.matches("gi_clamp(").count(), n_plain, "{p:?}");
        }
    }
    for chunk in patches.chunks(12) {
        let out = apply(&g, chunk);
        assert_eq!(unguarded(&out), Vec::<String>::new(), "{chunk:?}");
    }
}

#[test]
fn guarding_is_deterministic() {
    let src = kernel();
    let g = Grammar::parse(&src);
    let mut rng = StdRng::seed_from_u64(9);
    let patches: Vec<Patch> = (0..200).filter_map(|_| random_patch(&g, &mut rng)).take(10).collect();
    assert_eq!(apply(&g, &patches), apply(&Grammar::parse(&src), &patches));
    assert_eq!(guard(&src), guard(&src));
    // Only code lines change: the kernel's lines, comments and directives keep their order.
    let out = guard(&src);
    let body = out.strip_prefix(PRELUDE).unwrap();
    assert_eq!(body.lines().count(), src.lines().count());
    for (a, b) in src.lines().zip(body.lines()) {
        if a.trim_start().starts_with('#') || a.trim_start().starts_with("//") {
            assert_eq!(a, b);
        }
    }
    assert!(g.lines.iter().any(|l| matches!(l.kind, LineKind::For { .. })));
}

/// A loop given the empty condition of a `for (;;)` runs until its guard stops it (`()` would
/// not compile); the `for (;;)` itself, endless by design, has no guard.
#[test]
fn an_empty_condition_copied_into_a_loop_becomes_true() {
    let src = "__device__ void f(int *x)\n{\n    for (;;) {\n        if (x[0]) break;\n    }\n    for (int i = 0; i < 4; ++i) x[i] = 0;\n}\n";
    let g = Grammar::parse(src);
    let (endless, counted) = (line_of(&g, "for (;;)"), line_of(&g, "for (int i = 0;"));
    let p = Patch::ForPart { line: counted, from: endless, part: ForPart::Cond };
    assert!(p.valid(&g));
    let out = apply(&g, &[p]);
    let line = out.lines().find(|l| l.contains("for (int i = 0;")).unwrap();
    assert!(line.contains("(true) && gi_guard") && !line.contains("()"), "{line}");
    assert_eq!(out.matches("unsigned int gi_guard").count(), 1, "the for (;;) keeps no guard:\n{out}");
}
