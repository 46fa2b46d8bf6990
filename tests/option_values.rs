//! Option values: a negative or out-of-range number is an error naming the option and its
//! range (never clap's tip to write `-- -1`); values bwa gives a meaning to stay as bwa has
//! them (`aln -e -1`); `-t` is capped at the machine's threads, said once on stderr;
//! autotune without a GPU says so once.

mod common;

use common::*;

/// `bcuda args` (GPUs hidden): (success, stderr).
fn outcome(args: &[&str]) -> (bool, String) {
    let out = common::bcuda_command()
        .args(args)
        .env("CUDA_VISIBLE_DEVICES", "")
        .env("XDG_CONFIG_HOME", std::env::temp_dir())
        .output()
        .unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn out_of_range_values_name_the_option_and_its_range() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&testdata("demo_ref.fa"), tmp.path());
    let (p, r) = (prefix.to_str().unwrap(), testdata("demo_1.fq"));
    let r = r.to_str().unwrap();
    let cases: &[(&[&str], &str, &str)] = &[
        (&["aln", "-o", "-1", p, r], "'-o <MAX_GAPO>'", "from 0 to 255"),
        (&["aln", "-n", "-1", p, r], "'-n <MAX_DIFF>'", "from 0 to 255"),
        (&["aln", "-n", "-0.5", p, r], "'-n <MAX_DIFF>'", "above 0"),
        (&["aln", "-i", "-3", p, r], "'-i <INDEL_END_SKIP>'", "at least 0"),
        (&["aln", "-d", "-1", p, r], "'-d <MAX_DEL_OCC>'", "at least 0"),
        (&["aln", "-l", "0", p, r], "'-l <SEED_LEN>'", "at least 1"),
        (&["aln", "-k", "-2", p, r], "'-k <MAX_SEED_DIFF>'", "at least 0"),
        (&["aln", "-m", "-1", p, r], "'-m <MAX_ENTRIES>'", "at least 0"),
        (&["aln", "-t", "-4", p, r], "'-t <THREADS>'", "at least 1"),
        (&["aln", "-t", "0", p, r], "'-t <THREADS>'", "at least 1"),
        (&["aln", "-M", "-3", p, r], "'-M <S_MM>'", "from 0 to 2047"),
        (&["aln", "-O", "99999", p, r], "'-O <S_GAPO>'", "from 0 to 2047"),
        (&["aln", "-E", "-1", p, r], "'-E <S_GAPE>'", "from 0 to 2047"),
        (&["aln", "-R", "-1", p, r], "'-R <MAX_TOP2>'", "at least 0"),
        (&["aln", "-q", "-15", p, r], "'-q <TRIM_QUAL>'", "at least 0"),
        (&["aln", "-e", "256", p, r], "'-e <MAX_GAPE>'", "up to 255"),
        (&["samse", "-n", "-1", p, "x.sai", r], "'-n <MAX_XA>'", "at least 0"),
        (&["sampe", "-a", "-500", p, "a", "b", "c", "d"], "'-a <MAX_ISIZE>'", "at least 0"),
        (&["sampe", "-n", "-1", p, "a", "b", "c", "d"], "'-n <N_MULTI>'", "at least 0"),
        (&["sampe", "-N", "-1", p, "a", "b", "c", "d"], "'-N <N_MULTI_DISCORDANT>'", "at least 0"),
        (&["sampe", "-c", "-1e-5", p, "a", "b", "c", "d"], "'-c <AP_PRIOR>'", "from 0 to 1"),
        (&["sampe", "-c", "-1", p, "a", "b", "c", "d"], "'-c <AP_PRIOR>'", "from 0 to 1"),
        (&["aln", "-n", "-1e-2", p, r], "'-n <MAX_DIFF>'", "above 0"),
        (&["sampe", "-o", "-5", p, "a", "b", "c", "d"], "-o -5", "at least 0"),
        // aln -t 0 is an error: so is sampe's.
        (&["sampe", "-t", "0", p, "a", "b", "c", "d"], "'-t <THREADS>'", "at least 1"),
        (&["index", "--sort-memory", "0", "x.fa"], "'--sort-memory <SORT_MEMORY>'", "from 0.125 to 4096"),
        (&["index", "--sort-memory", "nan", "x.fa"], "'--sort-memory <SORT_MEMORY>'", "from 0.125 to 4096"),
        (&["index", "--sort-memory", "-2", "x.fa"], "'--sort-memory <SORT_MEMORY>'", "from 0.125 to 4096"),
        (&["autotune", "--batch-size", "0", "--reads", r], "'--batch-size <BATCH_SIZE>'", "at least 1"),
        (&["autotune", "--pop", "-1", "--reads", r], "'--pop <POP>'", "at least 1"),
        (
            &["autotune", "--variant-timeout", "-60", "--reads", r],
            "'--variant-timeout <VARIANT_TIMEOUT>'",
            "at least 1",
        ),
    ];
    for (args, option, range) in cases {
        let (success, err) = outcome(args);
        assert!(!success, "{args:?} succeeded");
        assert!(err.contains(option) && err.contains(range), "{args:?}: {err}");
        assert!(!err.contains("tip:") && !err.contains("-- -"), "{args:?}: {err}");
    }
}

#[test]
fn values_bwa_gives_a_meaning_match_bwa() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&testdata("demo_ref.fa"), tmp.path());
    let (p, r) = (prefix.to_str().unwrap(), testdata("demo.fq"));
    let r = r.to_str().unwrap();
    // -e -1 is bwa's default (any value of 0 or less: no long gaps); -e 0 and -e -5 as bwa too.
    for opts in [
        &["-e", "-1"][..],
        &["-e", "-5"],
        &["-e", "0"],
        &["-e", "3", "-o", "2"],
        &["-n", "0"],
        &["-M", "0"],
        &["-q", "0", "-l", "1"],
    ] {
        let args = command_line("aln", opts, &[p, r]);
        assert_eq!(bcuda(&quiet(args.clone())), bwa(&args), "{opts:?}");
    }
}

#[test]
fn a_huge_thread_count_is_capped_and_said_once() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&testdata("demo_ref.fa"), tmp.path());
    let (p, reads) = (prefix.to_str().unwrap(), [1, 2].map(|e| testdata(&format!("demo_{e}.fq"))));
    let r = reads.each_ref().map(|r| r.to_str().unwrap());
    let started = std::time::Instant::now();
    let out = common::bcuda_command().args(["aln", "--cpu", "-t", "100000", p, r[0]]).output().unwrap();
    assert!(out.status.success() && started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("-t 100000: this machine runs").count(), 1, "{err}");
    // The .sai header keeps the -t given, as bwa's.
    assert_eq!(out.stdout, bwa(&["aln", "-t", "100000", p, r[0]]));
    assert!(!bcuda(&["aln", "--cpu", "--quiet", "-t", "100000", p, r[0]]).is_empty());

    let sai = [0, 1].map(|e| tmp.path().join(format!("{e}.sai")));
    for e in 0..2 {
        std::fs::write(&sai[e], bwa(&["aln", p, r[e]])).unwrap();
    }
    let s = sai.each_ref().map(|s| s.to_str().unwrap());
    let out = common::bcuda_command().args(["sampe", "-t", "100000", p, s[0], s[1], r[0], r[1]]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && err.matches("-t 100000: this machine runs").count() == 1, "{err}");
    let (_, quiet_err) = outcome(&["sampe", "--quiet", "-t", "100000", p, s[0], s[1], r[0], r[1]]);
    assert!(!quiet_err.contains("this machine runs"), "{quiet_err}");
}

#[test]
fn autotune_without_a_gpu_says_so_once() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&testdata("demo_ref.fa"), tmp.path());
    let (success, err) = outcome(&[
        "autotune",
        "--quiet",
        "--index",
        prefix.to_str().unwrap(),
        "--reads",
        testdata("demo.fq").to_str().unwrap(),
    ]);
    assert!(!success && err.matches("no usable GPU found").count() == 1, "{err}");
    assert!(!err.contains("channel") && !err.contains("worker"), "{err}");
}
