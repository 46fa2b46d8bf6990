//! cuda/occ_sectors.cu and the sector counts of cuda/bwt.cuh built for the CPU
//! (occ_sectors/host.cpp) give bwa's counts and bases at every row of small genomes: with
//! 32-bit superblocks (one here) and with superblocks of 1,024 rows, so that the bases a
//! sector's counts are kept against are checked too. Skipped without a C++ compiler (`CXX`,
//! else `c++`).

mod common;

use std::process::Command;

use bcuda::search::seeded::{genome_with_repeats, indexed, xorshift};

#[test]
fn the_sectors_give_bwas_counts_at_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let small_supers = ["-DSECTOR_SUPER_SHIFT=10".to_string(), "-DSECTOR_SUPERS=128".to_string()];
    let builds = [("one_super", &[][..]), ("small_supers", &small_supers[..])];
    let mut hosts = Vec::new();
    for (name, defines) in &builds {
        match common::build_cpu_kernels(dir.path(), "occ_sectors/host.cpp", name, defines) {
            Some(exe) => hosts.push(exe),
            None => {
                eprintln!("skipped: no C++ compiler");
                return;
            }
        }
    }
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    for (g, size) in [20_000usize, 30_037].into_iter().enumerate() {
        let genome = genome_with_repeats(size, 100..700, &[5000, 9000], &mut next);
        let sub = dir.path().join(format!("g{g}"));
        std::fs::create_dir_all(&sub).unwrap();
        let (fa, _) = indexed(&sub, &genome);
        let bwt_path = bcuda_index::with_ext(&fa, ".bwt");
        for host in &hosts {
            let out = Command::new(host).arg(&bwt_path).output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let text = String::from_utf8(out.stdout).unwrap();
            let rows = 2 * size + 1;
            assert!(
                text.ends_with(&format!("rows {rows} mismatches 0 pair mismatches 0\n")),
                "{}: {text}",
                host.display()
            );
        }
    }
}
