//! BWA's binary `.sai` format (bwa 0.7.17, bwtaln.h / bwtaln.c).
//!
//! Layout: the magic `SAI\x01`, the 64-byte `gap_opt_t` options struct, then for each
//! read in input order an `i32` hit count followed by that many 24-byte [`AlnHit`]s.

use std::io::{self, Read, Write};

pub const SAI_MAGIC: &[u8; 4] = b"SAI\x01";

/// `mode` bits of `gap_opt_t` (bwtaln.h).
pub const MODE_GAPE: i32 = 0x01;
pub const MODE_COMPREAD: i32 = 0x02;
pub const MODE_LOGGAP: i32 = 0x04;
pub const MODE_NONSTOP: i32 = 0x10;
pub const MODE_IL13: i32 = 0x200;

/// BWA's `gap_opt_t`, field for field: 16 four-byte values, written raw after the magic.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GapOptions {
    pub s_mm: i32,
    pub s_gapo: i32,
    pub s_gape: i32,
    /// Mode bits (`MODE_*`); bits 24..31 hold the barcode length (-B).
    pub mode: i32,
    pub indel_end_skip: i32,
    pub max_del_occ: i32,
    pub max_entries: i32,
    /// -n as a fraction (missing-alignment probability); used when `max_diff` is -1.
    pub fnr: f32,
    pub max_diff: i32,
    pub max_gapo: i32,
    pub max_gape: i32,
    pub max_seed_diff: i32,
    pub seed_len: i32,
    pub n_threads: i32,
    pub max_top2: i32,
    pub trim_qual: i32,
}

impl Default for GapOptions {
    /// `gap_init_opt()` of bwa 0.7.17.
    fn default() -> Self {
        GapOptions {
            s_mm: 3,
            s_gapo: 11,
            s_gape: 4,
            mode: MODE_GAPE | MODE_COMPREAD,
            indel_end_skip: 5,
            max_del_occ: 10,
            max_entries: 2_000_000,
            fnr: 0.04,
            max_diff: -1,
            max_gapo: 1,
            max_gape: 6,
            max_seed_diff: 2,
            seed_len: 32,
            n_threads: 1,
            max_top2: 30,
            trim_qual: 0,
        }
    }
}

/// One hit of a read: BWA's `bwt_aln1_t`. The first 8 bytes are C bit fields packed
/// low bits first: n_mm:8, n_gapo:8, n_gape:8, score:20, n_ins:10, n_del:10.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AlnHit {
    pub n_mm: u8,
    pub n_gapo: u8,
    pub n_gape: u8,
    pub score: u32,
    pub n_ins: u16,
    pub n_del: u16,
    /// Suffix-array interval [k, l] of the hit.
    pub k: u64,
    pub l: u64,
}

impl AlnHit {
    pub const BYTES: usize = 24;

    pub fn to_bytes(&self) -> [u8; Self::BYTES] {
        let bits = (self.n_mm as u64)
            | (self.n_gapo as u64) << 8
            | (self.n_gape as u64) << 16
            | ((self.score as u64) & 0xf_ffff) << 24
            | ((self.n_ins as u64) & 0x3ff) << 44
            | ((self.n_del as u64) & 0x3ff) << 54;
        let mut out = [0u8; Self::BYTES];
        out[0..8].copy_from_slice(&bits.to_le_bytes());
        out[8..16].copy_from_slice(&self.k.to_le_bytes());
        out[16..24].copy_from_slice(&self.l.to_le_bytes());
        out
    }

    pub fn from_bytes(b: &[u8; Self::BYTES]) -> Self {
        let bits = u64::from_le_bytes(b[0..8].try_into().unwrap());
        AlnHit {
            n_mm: bits as u8,
            n_gapo: (bits >> 8) as u8,
            n_gape: (bits >> 16) as u8,
            score: ((bits >> 24) & 0xf_ffff) as u32,
            n_ins: ((bits >> 44) & 0x3ff) as u16,
            n_del: ((bits >> 54) & 0x3ff) as u16,
            k: u64::from_le_bytes(b[8..16].try_into().unwrap()),
            l: u64::from_le_bytes(b[16..24].try_into().unwrap()),
        }
    }
}

/// Writes the magic and the options header.
pub fn write_header<W: Write>(out: &mut W, opt: &GapOptions) -> io::Result<()> {
    out.write_all(SAI_MAGIC)?;
    out.write_all(bytemuck::bytes_of(opt))
}

/// Writes one read's hits (possibly none).
pub fn write_read<W: Write>(out: &mut W, hits: &[AlnHit]) -> io::Result<()> {
    out.write_all(&(hits.len() as i32).to_le_bytes())?;
    for hit in hits {
        out.write_all(&hit.to_bytes())?;
    }
    Ok(())
}

/// Errors reading a `.sai`.
#[derive(Debug, thiserror::Error)]
pub enum SaiError {
    #[error("not a BWA .sai file (bad magic); re-run `aln`")]
    BadMagic,
    #[error("truncated .sai: {0}")]
    Truncated(&'static str),
    #[error("corrupt .sai: read {read} has a negative hit count {n}")]
    NegativeCount { read: u64, n: i32 },
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// A `.sai` file (`-`: standard input) opened and its header read; errors name it.
pub fn open(path: &std::path::Path) -> anyhow::Result<SaiReader<io::BufReader<Box<dyn Read + Send>>>> {
    let input = io::BufReader::with_capacity(1 << 20, crate::input::open(path)?);
    SaiReader::new(input).map_err(|e| anyhow::anyhow!("{}: {e}", crate::input::display_name(path).display()))
}

/// Streaming reader: the header once, then one read's hits per call.
pub struct SaiReader<R: Read> {
    input: R,
    pub options: GapOptions,
    reads_done: u64,
}

impl<R: Read> SaiReader<R> {
    pub fn new(mut input: R) -> Result<Self, SaiError> {
        let mut magic = [0u8; 4];
        read_exact_or(&mut input, &mut magic, "missing magic")?;
        if &magic != SAI_MAGIC {
            return Err(SaiError::BadMagic);
        }
        let mut options = GapOptions::default();
        read_exact_or(&mut input, bytemuck::bytes_of_mut(&mut options), "header cut short")?;
        Ok(SaiReader { input, options, reads_done: 0 })
    }

    /// Reads whose records have been read whole so far.
    pub fn reads_done(&self) -> u64 {
        self.reads_done
    }

    /// The next read's hits, or `None` at a clean end of file.
    pub fn next_read(&mut self) -> Result<Option<Vec<AlnHit>>, SaiError> {
        let Some(n) = self.next_count()? else { return Ok(None) };
        // The count comes from the file: memory grows with the records actually read.
        let mut hits = Vec::with_capacity(n.min(1024));
        let mut buf = [0u8; AlnHit::BYTES];
        for _ in 0..n {
            read_exact_or(&mut self.input, &mut buf, "hit record cut short")?;
            hits.push(AlnHit::from_bytes(&buf));
        }
        self.reads_done += 1;
        Ok(Some(hits))
    }

    /// The next read's record exactly as stored (hit count, then its hits), appended to
    /// `record`; `false` at a clean end of file. For copying records without decoding them.
    pub fn next_read_bytes(&mut self, record: &mut Vec<u8>) -> Result<bool, SaiError> {
        let Some(n) = self.next_count()? else { return Ok(false) };
        record.extend_from_slice(&(n as i32).to_le_bytes());
        // Copied as far as the file goes (not sized from its count, which may be garbage).
        let want = (n * AlnHit::BYTES) as u64;
        let got = (&mut self.input).take(want).read_to_end(record)?;
        if (got as u64) < want {
            return Err(SaiError::Truncated("hit record cut short"));
        }
        self.reads_done += 1;
        Ok(true)
    }

    /// A read's hit count, or `None` at a clean end of file.
    fn next_count(&mut self) -> Result<Option<usize>, SaiError> {
        let mut count = [0u8; 4];
        let mut got = 0;
        while got < 4 {
            match self.input.read(&mut count[got..]) {
                Ok(0) if got == 0 => return Ok(None),
                Ok(0) => return Err(SaiError::Truncated("hit count cut short")),
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        let n = i32::from_le_bytes(count);
        if n < 0 {
            return Err(SaiError::NegativeCount { read: self.reads_done, n });
        }
        Ok(Some(n as usize))
    }
}

fn read_exact_or<R: Read>(input: &mut R, buf: &mut [u8], what: &'static str) -> Result<(), SaiError> {
    input.read_exact(buf).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => SaiError::Truncated(what),
        _ => SaiError::Io(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_64_bytes_of_options() {
        assert_eq!(std::mem::size_of::<GapOptions>(), 64);
    }

    #[test]
    fn one_mismatch_hit_matches_bwa_bytes() {
        // Seen in a bwa 0.7.17 .sai: one mismatch, score 3.
        let hit = AlnHit { n_mm: 1, score: 3, k: 5, l: 5, ..Default::default() };
        assert_eq!(&hit.to_bytes()[..8], &[1, 0, 0, 3, 0, 0, 0, 0]);
        assert_eq!(AlnHit::from_bytes(&hit.to_bytes()), hit);
    }

    #[test]
    fn all_bit_fields_round_trip() {
        let hit =
            AlnHit { n_mm: 255, n_gapo: 7, n_gape: 9, score: 0xfffff, n_ins: 1023, n_del: 513, k: u64::MAX, l: 1 };
        assert_eq!(AlnHit::from_bytes(&hit.to_bytes()), hit);
    }

    #[test]
    fn reader_round_trips_and_detects_truncation() {
        let mut buf = Vec::new();
        write_header(&mut buf, &GapOptions::default()).unwrap();
        write_read(&mut buf, &[]).unwrap();
        write_read(&mut buf, &[AlnHit { k: 3, l: 4, ..Default::default() }]).unwrap();
        let mut r = SaiReader::new(&buf[..]).unwrap();
        assert_eq!(r.options, GapOptions::default());
        assert_eq!(r.next_read().unwrap().unwrap().len(), 0);
        assert_eq!(r.next_read().unwrap().unwrap()[0].l, 4);
        assert!(r.next_read().unwrap().is_none());
        let cut = &buf[..buf.len() - 3];
        let mut r = SaiReader::new(cut).unwrap();
        r.next_read().unwrap();
        assert!(matches!(r.next_read(), Err(SaiError::Truncated(_))));
    }
}
