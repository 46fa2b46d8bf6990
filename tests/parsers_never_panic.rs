//! Our parsers never panic: seeded mutations of valid inputs go to each reader, which must
//! give a clean error or a correct result.
//!
//! A seeded mutation loop rather than proptest: the inputs are whole files whose valid
//! seeds we have (testdata/, an index built here), the mutations that matter are byte-level
//! (bit flips, cut and doubled ranges, header fields set to 0 / -1 / huge), and a fixed seed
//! with a fixed number of cases makes every CI run test exactly the same inputs, each of which
//! can be replayed from its number. No new dependency, and it runs in seconds.
//!
//! Cases (SEED below, 5,000 in all, well under a minute in release mode):
//! - 1,500 FASTQ (plain, read in batches; each also read gzip-compressed, which must agree),
//! - 500 gzip FASTQ with the compressed bytes mutated,
//! - 500 FASTA to the index's FASTA reader (every 5th also built into an index and checked),
//! - 1,500 `.sai` files (header and records),
//! - 1,000 index files, 200 for each of `.bwt .sa .pac .ann .amb`, loaded and then used,
//! - 150 index files with a corrupted body (size kept), 30 for each, through `bcuda aln`,
//!   `samse` and `sampe`: a clean error (naming the file when the load notices) or a result.
//!
//! A "correct result": for reads, the invariants the aligner relies on (codes 0..=4, one
//! quality per base, names without spaces, trimmed length within the read) and plain = gzip;
//! for `.sai`, a file read to its end writes back to the same bytes; for an index, one that
//! loads answers exact-match queries within its bounds, and its sequences and holes lie within
//! its length. Loading checks the bodies of `.bwt` (every checkpoint against its bases) and
//! `.sa` (every sample within the text); what it cannot see (bases swapped within a block,
//! samples swapped) must still not take a search or a suffix-array walk out of bounds.

mod common;

use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use bcuda::reads::{ReadBatch, ReadBatchReader, ReadOptions, MAX_READ_LEN};
use bcuda::sai::{self, AlnHit, GapOptions, SaiReader};
use bcuda_index::fasta::FastaReader;
use bcuda_index::{build_index, with_ext, BuildOptions, Index};
use common::testdata;

const SEED: u64 = 0x6263_7564_6166_757a;
const FASTQ_CASES: u64 = 1500;
const FASTQ_GZIP_CASES: u64 = 500;
const FASTA_CASES: u64 = 500;
const SAI_CASES: u64 = 1500;
const INDEX_CASES_PER_FILE: u64 = 200;

/// SplitMix64: a seeded generator that never changes with a dependency's version.
struct Rng(u64);

impl Rng {
    /// The generator of case `case` of the input kind `kind`: any case replays alone.
    fn for_case(kind: &str, case: u64) -> Rng {
        let k = kind.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
        Rng(SEED ^ k ^ case.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Bytes that parsers treat specially.
const INTERESTING_BYTES: &[u8] = b"\0\n\r\t @+>ACGTNacgtn#I~\x7f\x80\xff\x1f\x8b";

/// Values that break size and count fields.
const INTERESTING_WORDS: &[u64] = &[
    0,
    1,
    2,
    3,
    4,
    31,
    32,
    33,
    0x7f,
    0xff,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x1_0000_0000,
    i64::MAX as u64,
    u64::MAX,
    u64::MAX - 1,
];

/// 1 to 4 mutations of `data`; `header` is the length of a binary header whose fields are
/// the likeliest to matter (0: none), `body_ok` whether bytes past it may change.
fn mutate(rng: &mut Rng, data: &mut Vec<u8>, header: usize, body_ok: bool) {
    for _ in 0..1 + rng.below(4) {
        let len = data.len();
        let at = |rng: &mut Rng| if !body_ok && header > 0 { rng.below(header.min(len)) } else { rng.below(len) };
        match rng.below(10) {
            0 if len > 0 => {
                let i = at(rng);
                data[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = at(rng);
                data[i] = INTERESTING_BYTES[rng.below(INTERESTING_BYTES.len())];
            }
            2 if len > 0 && body_ok => {
                let i = rng.below(len);
                let n = (1 + rng.below(16)).min(len - i);
                data.drain(i..i + n);
            }
            3 if body_ok => {
                let i = rng.below(len + 1);
                let bytes: Vec<u8> = (0..1 + rng.below(8)).map(|_| rng.next() as u8).collect();
                data.splice(i..i, bytes);
            }
            4 if len > 0 && body_ok => {
                let (i, j) = (rng.below(len), rng.below(len + 1));
                let n = (1 + rng.below(64)).min(len - i);
                let copy = data[i..i + n].to_vec();
                data.splice(j..j, copy);
            }
            5 => data.truncate(rng.below(len + 1)),
            6 if header >= 8 && len >= 8 => {
                // A header field (4- or 8-byte aligned) set to an edge value.
                let width = if rng.below(2) == 0 { 4 } else { 8 };
                let i = rng.below((header.min(len) - width) / width + 1) * width;
                let v = INTERESTING_WORDS[rng.below(INTERESTING_WORDS.len())];
                data[i..i + width].copy_from_slice(&v.to_le_bytes()[..width]);
            }
            7 if len > 0 && body_ok => {
                // A line dropped or doubled (text formats).
                let lines: Vec<&[u8]> = data.split_inclusive(|&b| b == b'\n').collect();
                let i = rng.below(lines.len());
                let mut out: Vec<u8> = Vec::with_capacity(len + 64);
                for (n, line) in lines.iter().enumerate() {
                    if n != i || rng.below(2) == 0 {
                        out.extend_from_slice(line);
                    }
                    if n == i {
                        out.extend_from_slice(line);
                    }
                }
                *data = out;
            }
            8 => data.extend((0..rng.below(32)).map(|_| rng.next() as u8)),
            _ => {} // sometimes nothing: the input stays valid
        }
    }
}

/// Makes each case's input with `make` and runs `check` on it; collects the panics (with
/// their case number and a file holding the input) and fails the test with all of them.
fn run_cases(
    kind: &str,
    cases: u64,
    mut make: impl FnMut(&mut Rng) -> Vec<u8>,
    mut check: impl FnMut(&mut Rng, u64, &[u8]),
) {
    quiet_panics();
    let cases = cases * scale();
    let mut failures = Vec::new();
    for case in 0..cases {
        let mut rng = Rng::for_case(kind, case);
        let input = make(&mut rng);
        IN_CASE.with(|c| c.set(true));
        let outcome = catch_unwind(AssertUnwindSafe(|| check(&mut rng, case, &input)));
        IN_CASE.with(|c| c.set(false));
        if let Err(panic) = outcome {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            let kept = std::env::temp_dir().join(format!("bcuda-fuzz-{kind}-{case}"));
            let _ = std::fs::write(&kept, &input);
            failures.push(format!("{kind} case {case}: {msg} (input in {})", kept.display()));
        }
    }
    assert!(failures.is_empty(), "{} of {cases} {kind} cases panicked:\n{}", failures.len(), failures.join("\n"));
}

/// `BCUDA_FUZZ_SCALE=N` runs N times the cases (the first ones are CI's), for a longer
/// search by hand; CI leaves it unset.
fn scale() -> u64 {
    std::env::var("BCUDA_FUZZ_SCALE").ok().and_then(|v| v.parse().ok()).unwrap_or(1).max(1)
}

thread_local! {
    static IN_CASE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Panics inside a case are collected by `run_cases` (the default hook would print thousands
/// of them); any other panic, such as the test's final verdict, is printed as usual.
fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_CASE.with(|c| c.get()) {
                default(info);
            }
        }));
    });
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

// ---- reads ----

/// The seed FASTQ: real reads, plus lowercase, N, IUPAC, `/1` names, comments and CRLF.
fn fastq_seed() -> Vec<u8> {
    let demo = std::fs::read_to_string(testdata("demo.fq")).unwrap();
    let mut text: String = demo.lines().take(4 * 12).map(|l| format!("{l}\n")).collect();
    text.push_str(
        "@odd/1 a comment\nacgtNNRYacgtACGTAAAACCCCGGGGTTTTACGTAC\n+odd/1\n#####IIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII\n",
    );
    text.push_str("@crlf/2\r\nACGTACGTACGT\r\n+\r\nIIIIIIIIIIII\r\n");
    text.into_bytes()
}

/// A read as the parser gives it, copied out of its batch.
#[derive(Debug, PartialEq)]
struct Read {
    name: String,
    codes: Vec<u8>,
    qual: Vec<u8>,
    len: usize,
}

/// All reads of `input`, in random batch sizes (each batch read into the one before, as aln
/// reads them), or the first error.
fn read_all(rng: &mut Rng, input: Vec<u8>, opts: ReadOptions) -> Result<Vec<Read>, String> {
    let len = input.len() as u64;
    let mut reader =
        ReadBatchReader::from_reader(Box::new(std::io::Cursor::new(input)), Path::new("fuzz.fq"), len, opts)
            .map_err(|e| e.to_string())?;
    let (mut all, mut batch) = (Vec::new(), ReadBatch::default());
    loop {
        reader.next_batch_into(&mut batch, 1 + rng.below(5)).map_err(|e| e.to_string())?;
        if batch.is_empty() {
            return Ok(all);
        }
        all.extend(batch.iter().map(|r| Read {
            name: r.name.to_string(),
            codes: r.codes.to_vec(),
            qual: r.qual.to_vec(),
            len: r.len,
        }));
    }
}

fn check_reads(reads: &[Read], sequence_only: bool) {
    for r in reads {
        assert!(r.codes.iter().all(|&c| c <= 4), "a base code above 4");
        assert!(r.len <= r.codes.len() && r.codes.len() <= MAX_READ_LEN, "lengths {} / {}", r.len, r.codes.len());
        if sequence_only {
            assert!(r.name.is_empty() && r.qual.is_empty(), "a name or qualities kept for aln");
        } else {
            assert!(
                r.qual.is_empty() || r.qual.len() == r.codes.len(),
                "{} qualities for {} bases",
                r.qual.len(),
                r.codes.len()
            );
            assert!(!r.name.bytes().any(|b| b.is_ascii_whitespace()), "a space in the name {:?}", r.name);
        }
    }
}

fn random_read_options(rng: &mut Rng) -> ReadOptions {
    ReadOptions { trim_qual: [0, 0, 15, 40][rng.below(4)], illumina13: rng.below(4) == 0, sequence_only: false }
}

#[test]
fn fastq_plain_and_gzip() {
    let seed = fastq_seed();
    let expected = read_all(&mut Rng(0), seed.clone(), ReadOptions::default()).expect("the seed FASTQ parses");
    assert_eq!(expected.len(), 14);
    let make = |rng: &mut Rng| {
        let mut input = seed.clone();
        mutate(rng, &mut input, 0, true);
        input
    };
    run_cases("fastq", FASTQ_CASES, make, |rng, _, input| {
        let opts = random_read_options(rng);
        let plain = read_all(rng, input.to_vec(), opts);
        if let Ok(reads) = &plain {
            check_reads(reads, false);
            if input == seed.as_slice() && opts.trim_qual == 0 && !opts.illumina13 {
                assert_eq!(
                    reads.iter().map(|r| (&r.name, &r.codes, &r.qual)).collect::<Vec<_>>(),
                    expected.iter().map(|r| (&r.name, &r.codes, &r.qual)).collect::<Vec<_>>()
                );
            }
        }
        // The same bytes gzip-compressed, and aln's sequence-only reading, agree with it.
        let gz = read_all(rng, gzip(input), opts);
        match (&plain, &gz) {
            (Ok(a), Ok(b)) => assert!(
                a.iter().zip(b).all(|(x, y)| x.codes == y.codes && x.qual == y.qual && x.name == y.name)
                    && a.len() == b.len(),
                "plain and gzip differ"
            ),
            (Err(_), Err(_)) => {}
            _ => {
                panic!(
                    "plain {} but gzip {}",
                    if plain.is_ok() { "parses" } else { "fails" },
                    if gz.is_ok() { "parses" } else { "fails" }
                )
            }
        }
        let codes_only = read_all(rng, input.to_vec(), ReadOptions { sequence_only: true, ..opts });
        match (&plain, &codes_only) {
            (Ok(a), Ok(b)) => {
                check_reads(b, true);
                assert!(
                    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.codes == y.codes && x.len == y.len),
                    "sequence-only reading differs"
                )
            }
            (Err(_), Err(_)) => {}
            _ => panic!("sequence-only reading disagrees on whether the input parses"),
        }
    });
}

#[test]
fn fastq_gzip_bytes_mutated() {
    let seed = gzip(&fastq_seed());
    let make = |rng: &mut Rng| {
        let mut input = seed.clone();
        // The gzip header is 10 bytes; the rest is the deflate stream and the CRC.
        mutate(rng, &mut input, 10, true);
        input
    };
    run_cases("fastq-gz", FASTQ_GZIP_CASES, make, |rng, _, input| {
        let opts = random_read_options(rng);
        if let Ok(reads) = read_all(rng, input.to_vec(), opts) {
            check_reads(&reads, false);
        }
    });
}

// ---- FASTA and index construction ----

#[test]
fn fasta_to_the_index_reader() {
    let seed = std::fs::read(testdata("multi.fa")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let make = |rng: &mut Rng| {
        let mut input = seed.clone();
        mutate(rng, &mut input, 0, true);
        if rng.below(5) == 0 {
            input = gzip(&input);
        }
        input
    };
    run_cases("fasta", FASTA_CASES, make, |_, case, input| {
        let fasta = dir.path().join("ref.fa");
        std::fs::write(&fasta, input).unwrap();
        let records = FastaReader::open(&fasta).map_err(|e| e.to_string()).and_then(|mut r| {
            let mut all = Vec::new();
            while let Some(rec) = r.next_record().map_err(|e| e.to_string())? {
                all.push(rec);
            }
            Ok(all)
        });
        if case % 5 == 0 {
            let built = build_index(&fasta, &fasta, BuildOptions::default());
            if let (Ok(()), Ok(records)) = (&built, &records) {
                check_built_index(&fasta, records);
            }
            if let (Ok(()), Err(e)) = (&built, &records) {
                panic!("the index was built from a FASTA the reader refuses: {e}");
            }
        }
    });
}

/// An index built from `records`: the same length, and each record's first ACGT run is found.
fn check_built_index(prefix: &Path, records: &[bcuda_index::fasta::FastaRecord]) {
    let index = Index::load(prefix, true).expect("a built index loads");
    let total: u64 = records.iter().map(|r| r.seq.len() as u64).sum();
    assert_eq!(index.refs.l_pac(), total, "the index length is not the FASTA's");
    for rec in records {
        let run: Vec<u8> =
            rec.seq.iter().map_while(|&b| "ACGTacgt".find(b as char).map(|i| (i % 4) as u8)).take(12).collect();
        if run.len() == 12 {
            let (k, l) = index.bwt.match_exact(&run).expect("a sequence's own bases are in its index");
            assert!(k <= l && l <= index.bwt.seq_len());
        }
    }
}

// ---- .sai ----

fn sai_seed() -> Vec<u8> {
    let mut out = Vec::new();
    sai::write_header(&mut out, &GapOptions::default()).unwrap();
    let mut rng = Rng(7);
    for read in 0..12 {
        let hits: Vec<AlnHit> = (0..[0, 1, 1, 2, 5][read % 5])
            .map(|_| {
                let k = rng.next() % 100_000;
                AlnHit {
                    n_mm: rng.below(3) as u8,
                    n_gapo: rng.below(2) as u8,
                    n_gape: 0,
                    score: rng.below(40) as u32,
                    n_ins: 0,
                    n_del: rng.below(2) as u16,
                    k,
                    l: k + rng.next() % 4,
                }
            })
            .collect();
        sai::write_read(&mut out, &hits).unwrap();
    }
    out
}

#[test]
fn sai_files() {
    let seed = sai_seed();
    let make = |rng: &mut Rng| {
        let mut input = seed.clone();
        // magic + options: 4 + 64 bytes.
        let body_ok = rng.below(2) == 0;
        mutate(rng, &mut input, 68, body_ok);
        input
    };
    run_cases("sai", SAI_CASES, make, |_, _, input| {
        // Read to the end: a whole file must write back to the same bytes.
        let decoded = SaiReader::new(input).and_then(|mut r| {
            let mut out = Vec::new();
            sai::write_header(&mut out, &r.options).unwrap();
            while let Some(hits) = r.next_read()? {
                sai::write_read(&mut out, &hits).unwrap();
            }
            Ok(out)
        });
        if let Ok(out) = &decoded {
            assert!(out == input, "a .sai read whole does not write back to the same bytes");
        }
        // Copying records undecoded (merge-sai) agrees.
        let copied = SaiReader::new(input).and_then(|mut r| {
            let mut out = Vec::new();
            sai::write_header(&mut out, &r.options).unwrap();
            while r.next_read_bytes(&mut out)? {}
            Ok(out)
        });
        assert_eq!(decoded.is_ok(), copied.is_ok(), "decoding and copying disagree");
        if let (Ok(a), Ok(b)) = (&decoded, &copied) {
            assert!(a == b);
        }
    });
}

// ---- index files ----

#[test]
fn index_files() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.fa");
    std::fs::copy(testdata("multi.fa"), &base).unwrap();
    build_index(&base, &base, BuildOptions::default()).unwrap();
    let files: Vec<(&str, Vec<u8>)> = [".bwt", ".sa", ".pac", ".ann", ".amb"]
        .iter()
        .map(|&ext| (ext, std::fs::read(with_ext(&base, ext)).unwrap()))
        .collect();
    let original = Index::load(&base, true).unwrap();
    let queries = queries_from(&original);
    let expected = answers(&original, &queries);
    let prefix = dir.path().join("case.fa");
    for (n, (ext, seed)) in files.iter().enumerate() {
        // Headers: .bwt 40 bytes, .sa 56; .pac has none (any body byte is a base); the text
        // files are mutated anywhere.
        let header = match *ext {
            ".bwt" => 40,
            ".sa" => 56,
            _ => 0,
        };
        let make = |rng: &mut Rng| {
            let mut input = seed.clone();
            // Half the binary files' cases change their headers only.
            let body_ok = header == 0 || rng.below(2) == 0;
            mutate(rng, &mut input, header, body_ok);
            input
        };
        run_cases(&format!("index{ext}"), INDEX_CASES_PER_FILE, make, |_, _, input| {
            for (m, (e, bytes)) in files.iter().enumerate() {
                std::fs::write(with_ext(&prefix, e), if m == n { input } else { bytes }).unwrap();
            }
            for with_sa in [true, false] {
                if let Ok(index) = Index::load(&prefix, with_sa) {
                    check_index(&index);
                    let got = answers(&index, &queries);
                    if input == seed.as_slice() || *ext == ".ann" || *ext == ".amb" {
                        // Names and holes do not change where a sequence is found.
                        assert_eq!(
                            got.iter().map(|a| a.0).collect::<Vec<_>>(),
                            expected.iter().map(|a| a.0).collect::<Vec<_>>(),
                            "intervals differ"
                        );
                    }
                }
            }
        });
    }
}

/// 20-base stretches of the reference (as codes), from its packed text.
fn queries_from(index: &Index) -> Vec<Vec<u8>> {
    let l_pac = index.refs.l_pac();
    (0..8).map(|i| (0..20).map(|j| index.refs.base((i * 211 + j) % (l_pac - 20))).collect()).collect()
}

/// A query's interval, and the positions of its first rows when the index has an SA.
type Answer = (Option<(u64, u64)>, Vec<u64>);

/// Each query's interval and, with the SA, the positions of its first rows.
fn answers(index: &Index, queries: &[Vec<u8>]) -> Vec<Answer> {
    queries
        .iter()
        .map(|q| {
            let kl = index.bwt.match_exact(q);
            let mut positions = Vec::new();
            if let (Some((k, l)), Some(sa)) = (kl, &index.sa) {
                for row in k..=l.min(k + 3) {
                    let pos = sa.position(&index.bwt, row);
                    let l_pac = index.refs.l_pac();
                    // As samse uses a position: the sequence holding it and the holes around it.
                    if pos < 2 * l_pac {
                        let forward = if pos >= l_pac { 2 * l_pac - 1 - pos } else { pos };
                        index.refs.count_ambiguous(forward, 20);
                    }
                    positions.push(pos);
                }
            }
            (kl, positions)
        })
        .collect()
}

/// What the aligner and samse rely on in a loaded index.
fn check_index(index: &Index) {
    let (l_pac, seqs) = (index.refs.l_pac(), index.refs.seqs());
    assert_eq!(index.bwt.seq_len(), 2 * l_pac);
    let mut end = 0;
    for s in seqs {
        assert_eq!(s.offset, end, "sequence {} does not follow the previous one", s.name);
        end = s.offset.checked_add(s.len).expect("offset + length overflows");
    }
    assert_eq!(end, l_pac);
    for h in index.refs.holes() {
        assert!(h.offset.checked_add(h.len).is_some_and(|e| e <= l_pac), "a hole beyond the reference");
    }
    for pos in [0, l_pac / 2, l_pac.saturating_sub(1)] {
        index.refs.count_ambiguous(pos, 100);
        index.refs.seq_id_of(pos);
        index.refs.base(pos);
    }
}

// ---- corrupted index bodies, through the commands ----

const BODY_CASES_PER_FILE: u64 = 30;

/// 1 to 3 changes past the first `header` bytes, the size kept: a bit flipped, a byte set,
/// or an aligned 8-byte word (a checkpoint count, a sample) set to an edge value.
fn corrupt_body(rng: &mut Rng, data: &mut [u8], header: usize) {
    let body = data.len() - header;
    for _ in 0..1 + rng.below(3) {
        let i = header + rng.below(body);
        match rng.below(3) {
            0 => data[i] ^= 1 << rng.below(8),
            1 => data[i] = rng.next() as u8,
            _ if body >= 8 => {
                let w = header + rng.below(body / 8) * 8;
                let v = INTERESTING_WORDS[rng.below(INTERESTING_WORDS.len())];
                data[w..w + 8].copy_from_slice(&v.to_le_bytes());
            }
            _ => {}
        }
    }
}

/// `bcuda args`: Err(stderr) when it fails; panics (for `run_cases`) when it panicked, was
/// killed by a signal, or failed without an error line.
fn bcuda_outcome(args: &[&str]) -> Result<(), String> {
    let out = common::bcuda_command().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    match out.status.code() {
        Some(0) => Ok(()),
        Some(1) if err.contains("bcuda: error: ") => Err(err),
        code => panic!("{args:?} ended with {code:?}: {err}"),
    }
}

#[test]
fn index_bodies_through_aln_samse_sampe() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.fa");
    std::fs::copy(testdata("demo_ref.fa"), &good).unwrap();
    build_index(&good, &good, BuildOptions::default()).unwrap();
    let reads = [1, 2].map(|e| {
        let path = dir.path().join(format!("r{e}.fq"));
        common::head_fastq(&testdata(&format!("demo_{e}.fq")), 100, &path);
        path
    });
    let sai = [0, 1].map(|e| {
        let path = dir.path().join(format!("r{}.sai", e + 1));
        std::fs::write(
            &path,
            common::bcuda(&["aln", "--cpu", "--quiet", good.to_str().unwrap(), reads[e].to_str().unwrap()]),
        )
        .unwrap();
        path
    });
    let prefix = dir.path().join("case.fa");
    let exts = [".bwt", ".sa", ".pac", ".ann", ".amb"];
    for ext in exts {
        let header = match ext {
            ".bwt" => 40,
            ".sa" => 56,
            // The text files' first line: lengths and counts, fuzzed by `index_files`.
            _ => std::fs::read(with_ext(&good, ext)).unwrap().iter().position(|&b| b == b'\n').map_or(0, |n| n + 1),
        };
        let seed = std::fs::read(with_ext(&good, ext)).unwrap();
        let make = |rng: &mut Rng| {
            let mut input = seed.clone();
            corrupt_body(rng, &mut input, header);
            input
        };
        run_cases(&format!("body{ext}"), BODY_CASES_PER_FILE, make, |_, _, input| {
            for e in exts {
                let bytes = if e == ext { input.to_vec() } else { std::fs::read(with_ext(&good, e)).unwrap() };
                std::fs::write(with_ext(&prefix, e), bytes).unwrap();
            }
            let (p, r1, r2, s1, s2) = (
                prefix.to_str().unwrap(),
                reads[0].to_str().unwrap(),
                reads[1].to_str().unwrap(),
                sai[0].to_str().unwrap(),
                sai[1].to_str().unwrap(),
            );
            for args in [
                vec!["aln", "--cpu", "--quiet", p, r1],
                vec!["samse", "--quiet", p, s1, r1],
                vec!["sampe", "--quiet", p, s1, s2, r1, r2],
            ] {
                if let Err(err) = bcuda_outcome(&args) {
                    // A load that notices names the corrupted file.
                    let noticed = err.contains("corrupt index file")
                        || err.contains("does not belong")
                        || err.contains("truncated");
                    assert!(!noticed || err.contains(&format!("case.fa{ext}")), "{args:?}: {err}");
                }
            }
        });
    }
}
