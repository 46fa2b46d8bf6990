//! gzip (one member or several, as `cat a.gz b.gz` makes) inflated by ISA-L's igzip, the fastest
//! single-stream inflate we measured on FASTQ (bench/results/h100-80gb-hbm3-16c/input-rate.md). Of
//! a cut file the output comes out up to the byte where the data breaks off, then the error, so the
//! parser names the record the file breaks off in; of damaged data, what the failing call decoded
//! is dropped (it is the likeliest to be wrong), and the error follows.

use std::io::{self, Read};

use isal_sys::igzip_lib as isal;

/// Compressed bytes read from the input at a time.
const INPUT_BUF: usize = 256 << 10;

/// ISA-L's inflate state, boxed: it holds tables and buffers (tens of KiB).
struct State(Box<isal::inflate_state>);

// SAFETY: the state's pointers (next_in, next_out) are set before each isal_inflate call to
// buffers that call borrows and are not used after it; the state holds no handle tied to a
// thread, so it may move to another thread between calls.
unsafe impl Send for State {}

impl std::ops::Deref for State {
    type Target = isal::inflate_state;
    fn deref(&self) -> &isal::inflate_state {
        &self.0
    }
}

impl std::ops::DerefMut for State {
    fn deref_mut(&mut self) -> &mut isal::inflate_state {
        &mut self.0
    }
}

/// The members of a gzip stream, inflated one after another.
pub struct GzipMembers<R> {
    input: R,
    state: State,
    buf: Box<[u8]>,
    /// Compressed bytes in `buf[start..end]` not yet given to ISA-L.
    start: usize,
    end: usize,
    /// No more output: the end of the last member, or an error returned.
    done: bool,
}

impl<R: Read> GzipMembers<R> {
    pub fn new(input: R) -> GzipMembers<R> {
        // SAFETY: isal_inflate_init initialises every field of the state it is given.
        let mut state = Box::<isal::inflate_state>::new_uninit();
        let mut state = unsafe {
            isal::isal_inflate_init(state.as_mut_ptr());
            state.assume_init()
        };
        // The gzip wrapper: header parsed, CRC-32 and length checked at the member's end.
        state.crc_flag = isal::ISAL_GZIP;
        GzipMembers {
            input,
            state: State(state),
            buf: vec![0u8; INPUT_BUF].into_boxed_slice(),
            start: 0,
            end: 0,
            done: false,
        }
    }

    /// Reads more compressed bytes into `buf`; false at the end of the input.
    fn refill(&mut self) -> io::Result<bool> {
        debug_assert_eq!(self.start, self.end);
        loop {
            match self.input.read(&mut self.buf) {
                Ok(n) => {
                    (self.start, self.end) = (0, n);
                    return Ok(n > 0);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The next member starts where the last one ended: true when there is one, false at the
    /// end of the input.
    fn next_member(&mut self) -> io::Result<bool> {
        if self.start == self.end && !self.refill()? {
            return Ok(false);
        }
        // SAFETY: the state was initialised by isal_inflate_init; reset keeps crc_flag.
        unsafe { isal::isal_inflate_reset(&mut *self.state) };
        Ok(true)
    }

    /// One call of isal_inflate from `buf[start..end]` into `out`: the bytes written.
    fn inflate(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.end - self.start;
        let state = &mut *self.state;
        state.next_in = self.buf[self.start..].as_mut_ptr();
        state.avail_in = available as u32;
        state.next_out = out.as_mut_ptr();
        state.avail_out = out.len().min(u32::MAX as usize) as u32;
        let before_out = state.avail_out;
        // SAFETY: next_in/avail_in and next_out/avail_out describe live, disjoint buffers that
        // this call borrows; ISA-L keeps no pointer into them past the call (it copies what it
        // holds over into its own buffers).
        let ret = unsafe { isal::isal_inflate(state) };
        self.start += available - state.avail_in as usize;
        let written = (before_out - state.avail_out) as usize;
        if ret < 0 || ret == isal::ISAL_NEED_DICT as i32 {
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("damaged gzip data ({})", error_name(ret))));
        }
        Ok(written)
    }

    fn member_finished(&self) -> bool {
        self.state.block_state == isal::isal_block_state_ISAL_BLOCK_FINISH
    }

    /// The next bytes of output (0 at the end), or the error that stops them.
    fn read_some(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.member_finished() {
                if !self.next_member()? {
                    return Ok(0);
                }
                if self.buf[self.start] != 0x1f {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "bytes after the last gzip member that are not gzip",
                    ));
                }
            }
            if self.start == self.end && !self.refill()? {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the gzip data ends in the middle of a member (the file is cut short)",
                ));
            }
            let before = self.start;
            let written = self.inflate(out)?;
            if written > 0 {
                return Ok(written);
            }
            // Nothing written: a header or a trailer was read, or the input ran out in one.
            if self.start == before && !self.member_finished() && self.start < self.end {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "damaged gzip data (no progress)"));
            }
        }
    }
}

impl<R: Read> Read for GzipMembers<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.done || out.is_empty() {
            return Ok(0);
        }
        let result = self.read_some(out);
        if !matches!(result, Ok(n) if n > 0) {
            self.done = true;
        }
        result
    }
}

/// ISA-L's name for an inflate error.
fn error_name(ret: i32) -> &'static str {
    match ret {
        isal::ISAL_INVALID_BLOCK => "invalid block",
        isal::ISAL_INVALID_SYMBOL => "invalid symbol",
        isal::ISAL_INVALID_LOOKBACK => "invalid distance",
        isal::ISAL_INVALID_WRAPPER => "not a gzip header",
        isal::ISAL_UNSUPPORTED_METHOD => "unsupported compression method",
        isal::ISAL_INCORRECT_CHECKSUM => "CRC-32 or length check failed",
        _ => "unexpected state",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8], level: u32) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    /// FASTQ-like bytes that do not compress to nothing.
    fn sample(len: usize) -> Vec<u8> {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        (0..len)
            .map(|i| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                if i % 101 == 100 {
                    b'\n'
                } else {
                    b"ACGT"[(state % 4) as usize]
                }
            })
            .collect()
    }

    /// Reads `reader` to its end in reads of `step` bytes, through an input that hands out at
    /// most `input_step` bytes a read (as a pipe may).
    fn inflate_all(gz: &[u8], step: usize, input_step: usize) -> (Vec<u8>, Option<io::Error>) {
        struct Trickle<'a>(&'a [u8], usize);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = buf.len().min(self.1).min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut reader = GzipMembers::new(Trickle(gz, input_step));
        let mut out = Vec::new();
        let mut buf = vec![0u8; step];
        loop {
            match reader.read(&mut buf) {
                Ok(0) => return (out, None),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) => return (out, Some(e)),
            }
        }
    }

    #[test]
    fn members_are_inflated_in_order_whatever_the_reads() {
        let (a, b) = (sample(700_000), sample(3_000));
        let both = [gzip(&a, 6), gzip(b"", 6), gzip(&b, 1), gzip(&a, 9)].concat();
        for (step, input_step) in [(1 << 20, usize::MAX), (4096, 7), (1, 1 << 16), (65_536, 1)] {
            let (out, err) = inflate_all(&both, step, input_step);
            assert!(err.is_none(), "{err:?}");
            assert!(out == [&a[..], &b, &a].concat(), "steps {step}, {input_step}: {} bytes", out.len());
        }
        let (out, err) = inflate_all(&gzip(b"", 6), 100, 100);
        assert!(out.is_empty() && err.is_none(), "an empty member: {err:?}");
    }

    #[test]
    fn a_cut_or_damaged_stream_gives_what_it_held_then_an_error() {
        let data = sample(2_000_000);
        let gz = gzip(&data, 6);
        for cut in [5, 20, gz.len() / 3, gz.len() - 4] {
            let (out, err) = inflate_all(&gz[..cut], 1 << 16, usize::MAX);
            let err = err.expect("an error");
            assert!(data.starts_with(&out), "cut at {cut}");
            if cut > gz.len() / 4 {
                assert!(out.len() > data.len() / 4, "cut at {cut}: {} bytes before the error", out.len());
            }
            assert!(err.to_string().contains("cut short") || err.to_string().contains("damaged"), "{err}");
        }
        let mut damaged = gz.clone();
        let n = damaged.len();
        damaged[n - 6] ^= 0x40; // the CRC-32
        let (out, err) = inflate_all(&damaged, 1 << 20, usize::MAX);
        assert!(err.unwrap().to_string().contains("CRC-32"));
        assert!(data.starts_with(&out));
        let (_, err) = inflate_all(&[gz.clone(), b"junk".to_vec()].concat(), 1 << 20, usize::MAX);
        assert!(err.unwrap().to_string().contains("not gzip"));
        let (_, err) = inflate_all(b"not gzip at all", 1 << 20, usize::MAX);
        assert!(err.unwrap().to_string().contains("damaged"));
    }
}
