//! The loader answers occ, suffix-array and exact-match queries like a naive model of the
//! text, and rejects missing, truncated and mismatched files with errors naming the file.

mod common;

use bcuda_index::{build_index, BuildOptions, Index, IndexError};
use common::*;

fn lambda_index(dir: &std::path::Path) -> std::path::PathBuf {
    let fa = copy_into(&data("lambda.fa"), dir);
    build_index(&fa, &fa, BuildOptions::default()).unwrap();
    fa
}

/// The text (forward + reverse complement) decoded from the .pac.
fn text_of(index: &Index) -> Vec<u8> {
    let n = index.refs.l_pac();
    let fwd: Vec<u8> = (0..n).map(|i| index.refs.base(i)).collect();
    fwd.iter().copied().chain(fwd.iter().rev().map(|&c| 3 - c)).collect()
}

#[test]
fn occ_sa_and_exact_match_agree_with_naive_model() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = lambda_index(tmp.path());
    let index = Index::load(&prefix, true).unwrap();
    let (bwt, sa) = (&index.bwt, index.sa.as_ref().unwrap());
    let text = text_of(&index);
    let n = text.len() as u64;
    assert_eq!(bwt.seq_len(), n);

    // Suffix array by positions: every row's position, from the samples and LF walks.
    let positions: Vec<u64> = (0..=n).map(|k| sa.position(bwt, k)).collect();
    let mut sorted = positions.clone();
    sorted.sort_unstable();
    let expected: Vec<u64> = (0..n).chain([u64::MAX]).collect();
    assert_eq!(sorted, expected, "every text position appears once; row 0 is the `$`");
    for w in positions.windows(2).skip(1) {
        assert!(text[w[0] as usize..] < text[w[1] as usize..], "rows out of order");
    }

    // occ: counts of each base in the BWT (the base before each row's suffix), `$` excluded.
    let mut counts = [0u64; 4];
    for k in 0..=n {
        let p = positions[k as usize];
        if p != 0 && p != u64::MAX {
            counts[text[p as usize - 1] as usize] += 1;
        } else if p == u64::MAX {
            counts[text[n as usize - 1] as usize] += 1;
        }
        if k % 97 == 0 || k == n {
            assert_eq!(bwt.occ4(k), counts, "occ4 at row {k}");
            for c in 0..4u8 {
                assert_eq!(bwt.occ(k, c), counts[c as usize], "occ at row {k}");
            }
        }
    }

    // One-row intervals [l, l] (the kernels' occ_singleton): row l's block alone gives the
    // counts of rows l - 1 and l, which differ in row l's base only.
    let mut before = [0u64; 4];
    for l in 0..=n {
        let k = l.wrapping_sub(1);
        let expected = (before, bwt.occ4(l));
        assert_eq!(bwt.occ4_pair(k, l), expected, "occ4_pair at rows {k}, {l}");
        for c in 0..4u8 {
            assert_eq!(bwt.occ_pair(k, l, c), (before[c as usize], expected.1[c as usize]), "occ_pair at row {l}");
        }
        assert_eq!(bwt.row_base(l).is_none(), l == bwt.primary(), "only the primary row holds `$`");
        before = expected.1;
    }

    // Exact matches of substrings: the interval's rows are exactly the occurrences.
    for start in (0..n as usize - 40).step_by(997) {
        let pat = &text[start..start + 25];
        let (k, l) = bwt.match_exact(pat).expect("a substring of the text occurs");
        let mut hits: Vec<u64> = (k..=l).map(|r| positions[r as usize]).collect();
        hits.sort_unstable();
        let naive: Vec<u64> = (0..=n as usize - 25).filter(|&i| &text[i..i + 25] == pat).map(|i| i as u64).collect();
        assert_eq!(hits, naive);
    }
}

#[test]
fn missing_truncated_and_foreign_files_are_rejected() {
    let tmp = tempfile::tempdir().unwrap();
    let lambda = lambda_index(&mkdir(tmp.path().join("a")));
    let other = copy_into(&testdata("multi.fa"), &mkdir(tmp.path().join("b")));
    build_index(&other, &other, BuildOptions::default()).unwrap();

    // Missing .sa
    std::fs::remove_file(with_ext(&other, ".sa")).unwrap();
    let err = Index::load(&other, true).err().unwrap();
    assert!(matches!(err, IndexError::Missing { .. }), "{err}");
    assert!(err.to_string().contains("multi.fa.sa"), "{err}");
    assert!(Index::load(&other, false).is_ok());

    // Truncated .bwt
    let bwt_path = with_ext(&lambda, ".bwt");
    let full = std::fs::read(&bwt_path).unwrap();
    std::fs::write(&bwt_path, &full[..full.len() - 100]).unwrap();
    let err = Index::load(&lambda, false).err().unwrap();
    assert!(matches!(err, IndexError::Truncated { .. }), "{err}");
    assert!(err.to_string().contains("lambda.fa.bwt"), "{err}");
    std::fs::write(&bwt_path, &full).unwrap();

    // A .bwt from another genome
    std::fs::copy(with_ext(&other, ".bwt"), &bwt_path).unwrap();
    let err = Index::load(&lambda, false).err().unwrap();
    assert!(matches!(err, IndexError::Mismatch { .. }), "{err}");
    std::fs::write(&bwt_path, &full).unwrap();

    // A .sa from another genome
    let lambda_sa = std::fs::read(with_ext(&lambda, ".sa")).unwrap();
    let other_prefix = copy_into(&testdata("multi.fa"), &mkdir(tmp.path().join("c")));
    build_index(&other_prefix, &other_prefix, BuildOptions::default()).unwrap();
    std::fs::write(with_ext(&lambda, ".sa"), std::fs::read(with_ext(&other_prefix, ".sa")).unwrap()).unwrap();
    let err = Index::load(&lambda, true).err().unwrap();
    assert!(matches!(err, IndexError::Mismatch { .. }), "{err}");
    std::fs::write(with_ext(&lambda, ".sa"), lambda_sa).unwrap();

    // Truncated .pac and .ann
    let pac = std::fs::read(with_ext(&lambda, ".pac")).unwrap();
    std::fs::write(with_ext(&lambda, ".pac"), &pac[..pac.len() / 2]).unwrap();
    assert!(matches!(Index::load(&lambda, false).err().unwrap(), IndexError::Truncated { .. }));
    std::fs::write(with_ext(&lambda, ".pac"), &pac).unwrap();
    std::fs::write(with_ext(&lambda, ".ann"), "48502 1 11\n0 gi|9626243|ref|NC_001416.1|\n").unwrap();
    assert!(matches!(Index::load(&lambda, false).err().unwrap(), IndexError::Truncated { .. }));
}

/// The interval table holds, for every string of up to its depth, the interval bwa's backward
/// search gives it (checked on every string of up to 7 bases of lambda), and its levels lie
/// where `level_start` says.
#[test]
fn interval_table_matches_backward_search() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = lambda_index(tmp.path());
    let index = Index::load(&prefix, false).unwrap();
    let bwt = &index.bwt;
    let table = bcuda_index::IntervalTable::build(bwt, 7);
    assert_eq!(table.pairs().len(), bcuda_index::IntervalTable::len_for(7));
    assert_eq!(table.interval(0, 0), (0, bwt.seq_len()));
    let (mut found, mut empty) = (0, 0);
    for d in 1..=7u32 {
        for w in 0..1u64 << (2 * d) {
            // w's bases in search order, the first searched the most significant: the
            // pattern, read left to right, ends with the first searched.
            let pattern: Vec<u8> = (0..d).map(|j| (w >> (2 * j)) as u8 & 3).collect();
            let (k, l) = table.interval(d, w);
            match bwt.match_exact(&pattern) {
                Some(kl) => {
                    assert_eq!((k, l), kl, "string {pattern:?}");
                    found += 1;
                }
                None => {
                    assert!(k > l, "string {pattern:?} does not occur");
                    empty += 1;
                }
            }
            if d < 7 {
                let kids = table.extensions(d, w);
                for c in 0..4u64 {
                    assert_eq!(kids[c as usize], table.interval(d + 1, 4 * w + c));
                }
            }
        }
    }
    assert!(found > 10_000 && empty > 500, "{found} strings found, {empty} absent");
}
