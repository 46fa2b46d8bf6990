//! The reference sequences: names and offsets (`.ann`), runs of ambiguous bases (`.amb`) and
//! the forward strand packed 2 bits per base (`.pac`). BWA's bntseq.

use std::fmt::Write as _;
use std::path::Path;

use memmap2::Mmap;

use crate::error::{with_ext, IndexError, Result};

/// One reference sequence, as a line pair of `.ann`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefSeq {
    pub gi: u32,
    pub name: String,
    /// The FASTA header after the name; `(null)` when there is none, as bwa writes it.
    pub anno: String,
    /// Offset of the first base in the concatenated forward text.
    pub offset: u64,
    pub len: u64,
    pub n_ambs: u32,
}

/// A run of one ambiguous character (N, IUPAC code, '-', ...) in the forward text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hole {
    pub offset: u64,
    pub len: u64,
    pub amb: u8,
}

pub struct RefSeqs {
    l_pac: u64,
    seed: u32,
    seqs: Vec<RefSeq>,
    holes: Vec<Hole>,
    pac: Mmap,
}

/// `.pac` size in bytes for `l_pac` bases: the packed bases (rounded up), then a 0 byte when
/// `l_pac` is a multiple of 4, then a byte holding `l_pac % 4`: always `l_pac / 4 + 2`.
pub fn pac_file_len(l_pac: u64) -> u64 {
    l_pac / 4 + 2
}

impl RefSeqs {
    pub fn load(prefix: &Path) -> Result<RefSeqs> {
        let ann_path = with_ext(prefix, ".ann");
        let amb_path = with_ext(prefix, ".amb");
        let pac_path = with_ext(prefix, ".pac");
        let ann = std::fs::read(&ann_path).map_err(|e| IndexError::index_io(&ann_path, e))?;
        // bwa copies header bytes verbatim; a non-UTF-8 comment of a bwa-made index still loads.
        let ann = String::from_utf8_lossy(&ann);
        let (l_pac, seed, seqs) = parse_ann(&ann_path, &ann)?;
        let amb = std::fs::read(&amb_path).map_err(|e| IndexError::index_io(&amb_path, e))?;
        let holes = parse_amb(&amb_path, &amb, l_pac, seqs.len())?;
        let file = std::fs::File::open(&pac_path).map_err(|e| IndexError::index_io(&pac_path, e))?;
        // SAFETY: read-only input, never written through the map.
        let pac = unsafe { Mmap::map(&file) }.map_err(|e| IndexError::index_io(&pac_path, e))?;
        let expected = pac_file_len(l_pac);
        if (pac.len() as u64) < expected {
            return Err(IndexError::truncated(
                &pac_path,
                format!("{} bytes, expected {expected} for {l_pac} bases", pac.len()),
            ));
        }
        if pac.len() as u64 != expected || pac[pac.len() - 1] as u64 != l_pac % 4 {
            return Err(IndexError::mismatch(
                &pac_path,
                format!("size or last byte does not fit the {l_pac} bases of the .ann"),
            ));
        }
        Ok(RefSeqs { l_pac, seed, seqs, holes, pac })
    }

    /// Length of the forward text (all sequences concatenated).
    pub fn l_pac(&self) -> u64 {
        self.l_pac
    }
    pub fn seed(&self) -> u32 {
        self.seed
    }
    pub fn seqs(&self) -> &[RefSeq] {
        &self.seqs
    }
    pub fn holes(&self) -> &[Hole] {
        &self.holes
    }
    /// The packed forward text (4 bases per byte, first base in the high bits).
    pub fn pac(&self) -> &[u8] {
        &self.pac
    }

    /// Base (0..=3) at forward position `pos`.
    #[inline]
    pub fn base(&self, pos: u64) -> u8 {
        pac_base(&self.pac, pos)
    }

    /// Index of the sequence holding forward position `pos`, `None` past the end (bwa's bns_pos2rid).
    pub fn seq_id_of(&self, pos: u64) -> Option<usize> {
        if pos >= self.l_pac {
            return None;
        }
        Some(self.seqs.partition_point(|s| s.offset <= pos).saturating_sub(1))
    }

    /// Ambiguous bases in `[pos, pos+len)` as bwa's bns_cnt_ambi counts them: the overlap with
    /// the first hole its binary search meets (one hole only, like bwa), and the sequence of `pos`.
    pub fn count_ambiguous(&self, pos: u64, len: u64) -> (u64, Option<usize>) {
        let end = pos + len;
        let (mut left, mut right) = (0usize, self.holes.len());
        while left < right {
            let mid = (left + right) / 2;
            let h = &self.holes[mid];
            if pos >= h.offset + h.len {
                left = mid + 1;
            } else if end <= h.offset {
                right = mid;
            } else {
                let n = if pos >= h.offset {
                    (h.offset + h.len).min(end) - pos
                } else if h.offset + h.len < end {
                    h.len
                } else {
                    end - h.offset
                };
                return (n, self.seq_id_of(pos));
            }
        }
        (0, self.seq_id_of(pos))
    }
}

/// Base at `pos` of a packed text.
#[inline]
pub fn pac_base(pac: &[u8], pos: u64) -> u8 {
    pac[(pos >> 2) as usize] >> ((!pos & 3) << 1) & 3
}

fn parse_ann(path: &Path, text: &str) -> Result<(u64, u32, Vec<RefSeq>)> {
    let bad = |what: &str| IndexError::corrupt(path, what.to_string());
    let mut lines = text.lines();
    let head: Vec<&str> =
        lines.next().ok_or_else(|| IndexError::truncated(path, "empty file"))?.split_whitespace().collect();
    if head.len() != 3 {
        return Err(bad("first line is not `length n_seqs seed`"));
    }
    let l_pac: u64 = head[0].parse().map_err(|_| bad("bad total length"))?;
    let n_seqs: usize = head[1].parse().map_err(|_| bad("bad number of sequences"))?;
    let seed: u32 = head[2].parse().map_err(|_| bad("bad seed"))?;
    // Counts come from the file: memory grows with the lines actually read.
    let mut seqs = Vec::with_capacity(n_seqs.min(1 << 16));
    let mut end = 0u64;
    for i in 0..n_seqs {
        let missing = || IndexError::truncated(path, format!("sequence {} of {n_seqs} is missing", i + 1));
        let name_line = lines.next().ok_or_else(missing)?;
        let mut parts = name_line.splitn(3, ' ');
        let gi = parts.next().and_then(|s| s.parse().ok()).ok_or_else(|| bad("bad gi"))?;
        let name = parts.next().filter(|s| !s.is_empty()).ok_or_else(|| bad("missing sequence name"))?.to_string();
        let anno = parts.next().unwrap_or("").to_string();
        let nums: Vec<&str> = lines.next().ok_or_else(missing)?.split_whitespace().collect();
        if nums.len() != 3 {
            return Err(bad("offset line is not `offset length n_ambs`"));
        }
        let offset: u64 = nums[0].parse().map_err(|_| bad("bad offset"))?;
        let len = nums[1].parse().map_err(|_| bad("bad length"))?;
        let n_ambs = nums[2].parse().map_err(|_| bad("bad hole count"))?;
        // Sequences follow each other (bwa's offset is the previous offset + length).
        if offset != end {
            return Err(bad(&format!(
                "sequence {} starts at {offset}, not where the previous one ends ({end})",
                i + 1
            )));
        }
        end = offset
            .checked_add(len)
            .filter(|&e| e <= l_pac)
            .ok_or_else(|| bad("sequence lengths add up to more than the total length"))?;
        seqs.push(RefSeq { gi, name, anno, offset, len, n_ambs });
    }
    if end != l_pac {
        return Err(bad("sequence lengths do not add up to the total length"));
    }
    Ok((l_pac, seed, seqs))
}

fn parse_amb(path: &Path, bytes: &[u8], l_pac: u64, n_seqs: usize) -> Result<Vec<Hole>> {
    let bad = |what: &str| IndexError::corrupt(path, what.to_string());
    // Lines split on '\n' only: a hole's character is any byte of a FASTA line, even ' ' or '\r'.
    let mut lines = bytes.split(|&b| b == b'\n');
    let head = lines.next().filter(|l| !l.is_empty()).ok_or_else(|| IndexError::truncated(path, "empty file"))?;
    let head: Vec<&str> =
        std::str::from_utf8(head).map_err(|_| bad("first line is not text"))?.split_whitespace().collect();
    if head.len() != 3 {
        return Err(bad("first line is not `length n_seqs n_holes`"));
    }
    if head[0].parse::<u64>().ok() != Some(l_pac) || head[1].parse::<usize>().ok() != Some(n_seqs) {
        return Err(IndexError::mismatch(path, "its length or sequence count differs from the .ann"));
    }
    let n_holes: usize = head[2].parse().map_err(|_| bad("bad hole count"))?;
    let mut holes: Vec<Hole> = Vec::with_capacity(n_holes.min(1 << 16));
    for i in 0..n_holes {
        let line = lines
            .next()
            .filter(|l| !l.is_empty())
            .ok_or_else(|| IndexError::truncated(path, format!("hole {} of {n_holes} is missing", i + 1)))?;
        let hole = parse_hole(line).ok_or_else(|| bad(&format!("hole line {} is not `offset length char`", i + 2)))?;
        // Holes are in order and within the reference (samse searches them by position).
        let after_previous = holes.last().is_none_or(|h| h.offset + h.len <= hole.offset);
        if !after_previous || hole.offset.checked_add(hole.len).is_none_or(|e| e > l_pac) {
            return Err(bad(&format!("hole line {} lies before the previous hole or beyond the {l_pac} bases", i + 2)));
        }
        holes.push(hole);
    }
    Ok(holes)
}

/// `offset length c`: two numbers, one separating space, then the hole's character (a raw byte).
fn parse_hole(line: &[u8]) -> Option<Hole> {
    let (amb, numbers) = line.split_last()?;
    let numbers = std::str::from_utf8(numbers.strip_suffix(b" ")?).ok()?;
    let (offset, len) = numbers.split_once(' ')?;
    Some(Hole { offset: offset.parse().ok()?, len: len.parse().ok()?, amb: *amb })
}

/// The text of `.ann` (bwa's bns_dump).
pub fn format_ann(l_pac: u64, seed: u32, seqs: &[RefSeq]) -> String {
    let mut s = format!("{} {} {}\n", l_pac, seqs.len(), seed);
    for r in seqs {
        if r.anno.is_empty() {
            let _ = writeln!(s, "{} {}", r.gi, r.name);
        } else {
            let _ = writeln!(s, "{} {} {}", r.gi, r.name, r.anno);
        }
        let _ = writeln!(s, "{} {} {}", r.offset, r.len, r.n_ambs);
    }
    s
}

/// The text of `.amb`.
pub fn format_amb(l_pac: u64, n_seqs: usize, holes: &[Hole]) -> Vec<u8> {
    let mut s = format!("{} {} {}\n", l_pac, n_seqs, holes.len()).into_bytes();
    for h in holes {
        // The character as the raw byte bwa writes, not its UTF-8 encoding.
        s.extend_from_slice(format!("{} {} ", h.offset, h.len).as_bytes());
        s.extend_from_slice(&[h.amb, b'\n']);
    }
    s
}
