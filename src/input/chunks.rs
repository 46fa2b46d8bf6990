//! A decompressed FASTQ or FASTA stream cut into chunks of whole records, so that the chunks
//! can be parsed on several threads and give exactly the records of the whole stream.
//!
//! A FASTQ record is four lines (the parser takes no other form), so a cut falls after a
//! multiple of four lines from the start of the stream, and only where the next line starts
//! with `@`: a malformed record then stays at the same place in its chunk as in the whole
//! stream, and is reported the same way. A FASTA record runs to the next line that starts with
//! `>`, so a cut falls before such a line. Every chunk starts where the stream does (with
//! `@` or `>`, unless the stream does not), which keeps one format for all chunks.

use std::io::{self, Read};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// Bytes a chunk holds before it is cut (more when a record is longer).
pub const CHUNK_BYTES: usize = 1 << 20;
/// A chunk grows to this many times [`CHUNK_BYTES`] looking for a cut (in a stream that has
/// none, e.g. blank lines where a record should start) before it is cut where the lines say.
const MAX_GROWTH: usize = 16;

/// A chunk of whole records, and the bytes of the underlying (compressed) input read when it
/// was cut, for progress.
#[derive(Debug)]
pub struct Chunk {
    /// The chunk is `buffer[..len]`; the rest is left from an earlier chunk.
    buffer: Vec<u8>,
    len: usize,
    pub position: u64,
    /// The stream is FASTA (it starts with `>`; every chunk is read in the stream's format).
    pub fasta: bool,
}

impl Chunk {
    pub fn bytes(&self) -> &[u8] {
        &self.buffer[..self.len]
    }

    /// The chunk's buffer, to be handed back to its chunker (see [`Chunker::recycler`]).
    pub fn into_buffer(self) -> Vec<u8> {
        self.buffer
    }
}

/// Cuts a stream into [`Chunk`]s.
pub struct Chunker<R> {
    input: R,
    /// Bytes read and not yet cut off are `buf[..filled]`; the rest of `buf` is zeroed or left
    /// from an earlier chunk, so that reading into it never zeroes it again.
    buf: Vec<u8>,
    filled: usize,
    target: usize,
    /// The first byte of the stream (`@` FASTQ, `>` FASTA), once read.
    first: Option<u8>,
    eof: bool,
    /// A read error met with records still buffered: returned after them.
    pending_error: Option<io::Error>,
    /// Reports the input's position at each cut.
    position: Box<dyn Fn() -> u64 + Send>,
    /// Buffers of chunks parsed, to be filled again: a new one costs this thread a fault and
    /// the kernel's zeroing per page, and zeroing it once more before reading (half of its
    /// time for plain FASTQ in a profile).
    spares: Receiver<Vec<u8>>,
    recycler: SyncSender<Vec<u8>>,
}

/// Buffers a chunker keeps for reuse: more than the chunks it is ever ahead of the parser.
const SPARE_CHUNKS: usize = 128;

impl<R: Read> Chunker<R> {
    pub fn new(input: R, position: Box<dyn Fn() -> u64 + Send>) -> Chunker<R> {
        Chunker::with_target(input, CHUNK_BYTES, position)
    }

    /// Chunks of about `target` bytes (tests use small ones).
    pub fn with_target(input: R, target: usize, position: Box<dyn Fn() -> u64 + Send>) -> Chunker<R> {
        let (recycler, spares) = sync_channel(SPARE_CHUNKS);
        Chunker {
            input,
            buf: Vec::new(),
            filled: 0,
            target: target.max(1),
            first: None,
            eof: false,
            pending_error: None,
            position,
            spares,
            recycler,
        }
    }

    /// Where the buffers of chunks done with go, to be filled again ([`Chunk::into_buffer`]).
    pub fn recycler(&self) -> SyncSender<Vec<u8>> {
        self.recycler.clone()
    }

    /// The next chunk; `None` at the end of the stream. A read error comes after the whole
    /// records read before it.
    pub fn next_chunk(&mut self) -> io::Result<Option<Chunk>> {
        loop {
            if let Some(e) = self.pending_error.take() {
                return Err(e);
            }
            if self.eof {
                return Ok(self.take(self.filled));
            }
            if self.filled >= self.target {
                let forced = self.filled >= MAX_GROWTH * self.target;
                if let Some(at) = cut(&self.buf[..self.filled], self.first, forced) {
                    return Ok(self.take(at));
                }
            }
            if let Err(e) = self.fill() {
                // The whole records before the error first; the broken one is dropped.
                let whole = cut(&self.buf[..self.filled], self.first, true).unwrap_or(0);
                self.pending_error = Some(e);
                if whole > 0 {
                    return Ok(self.take(whole));
                }
            }
        }
    }

    /// The first `n` bytes as a chunk (`None` when `n` is 0); the bytes after them start a
    /// spare buffer.
    fn take(&mut self, n: usize) -> Option<Chunk> {
        if n == 0 {
            return None;
        }
        let rest = self.filled - n;
        let mut next = self.spares.try_recv().unwrap_or_default();
        if next.len() < rest {
            next.resize(rest, 0);
        }
        next[..rest].copy_from_slice(&self.buf[n..self.filled]);
        let buffer = std::mem::replace(&mut self.buf, next);
        self.filled = rest;
        Some(Chunk { buffer, len: n, position: (self.position)(), fasta: self.first == Some(b'>') })
    }

    /// Reads up to the next multiple of the target (or the end of the stream).
    fn fill(&mut self) -> io::Result<()> {
        let want = (self.filled / self.target).saturating_add(1).saturating_mul(self.target);
        while self.filled < want {
            if self.filled == self.buf.len() {
                // Room for a chunk, no more: the target may be far above what the input holds.
                let room = want.min(self.filled + self.filled.max(4 * CHUNK_BYTES));
                self.buf.resize(room, 0);
            }
            let end = self.buf.len().min(want);
            match self.input.read(&mut self.buf[self.filled..end]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if self.first.is_none() {
            self.first = self.buf[..self.filled].first().copied();
        }
        Ok(())
    }
}

/// Where to cut `buf` (a whole number of records before it, more bytes after it); `None` when
/// there is no cut yet. `forced`: also where the next line does not start a record.
fn cut(buf: &[u8], first: Option<u8>, forced: bool) -> Option<usize> {
    match first {
        Some(b'>') => fasta_cut(buf),
        _ => fastq_cut(buf, forced),
    }
}

/// After the last line that a `>` line follows.
fn fasta_cut(buf: &[u8]) -> Option<usize> {
    memchr::memrchr_iter(b'\n', buf).map(|nl| nl + 1).find(|&at| at < buf.len() && buf[at] == b'>')
}

/// After the last multiple of four lines that an `@` line follows (or just the last multiple
/// of four lines when `forced`).
fn fastq_cut(buf: &[u8], forced: bool) -> Option<usize> {
    let lines = count_newlines(buf);
    // Newline positions from the end: the one ending line 4k is the (lines - 4k + 1)-th.
    let mut ends = memchr::memrchr_iter(b'\n', buf);
    let mut skip = lines % 4;
    let mut boundary = lines - skip;
    while boundary > 0 {
        let at = ends.nth(skip)? + 1;
        if forced || (at < buf.len() && buf[at] == b'@') {
            return Some(at);
        }
        (skip, boundary) = (3, boundary - 4);
    }
    None
}

/// Newlines in `buf` (this runs on one thread for the whole input).
pub fn count_newlines(buf: &[u8]) -> usize {
    bytecount::count(buf, b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// The chunks of `data`, each buffer handed back filled with `@` (what is left in a buffer
    /// must never be taken for the stream).
    fn chunks(data: &[u8], target: usize) -> Vec<Vec<u8>> {
        let mut chunker = Chunker::with_target(Cursor::new(data.to_vec()), target, Box::new(|| 0));
        let recycler = chunker.recycler();
        let mut all = Vec::new();
        while let Some(chunk) = chunker.next_chunk().unwrap() {
            all.push(chunk.bytes().to_vec());
            let mut buffer = chunk.into_buffer();
            buffer.fill(b'@');
            recycler.send(buffer).unwrap();
        }
        all
    }

    #[test]
    fn fastq_is_cut_after_whole_records_where_a_record_starts() {
        // Qualities that start with '@' do not fool the cut.
        let record = |i: usize| format!("@r{i}\nACGT\n+\n@@II\n");
        let data: String = (0..50).map(record).collect();
        for target in [1, 7, 16, 40, 1000] {
            let got = chunks(data.as_bytes(), target);
            assert_eq!(got.concat(), data.as_bytes(), "target {target}");
            for c in &got {
                assert_eq!(count_newlines(c) % 4, 0, "target {target}: {}", String::from_utf8_lossy(c));
                assert_eq!(c[0], b'@');
            }
            if target < 100 {
                assert!(got.len() > 5, "target {target}: {} chunks", got.len());
            }
        }
    }

    #[test]
    fn a_cut_is_never_before_blank_lines_or_a_line_that_is_not_a_record() {
        let data = b"@a\nAC\n+\nII\n@b\nAC\n+\nII\n\n\n\n\n\n";
        let got = chunks(data, 4);
        assert_eq!(got, [b"@a\nAC\n+\nII\n".to_vec(), b"@b\nAC\n+\nII\n\n\n\n\n\n".to_vec()]);
        // No newline at the end.
        assert_eq!(chunks(b"@a\nAC\n+\nII\n@b\nAC\n+\nII", 4).concat(), b"@a\nAC\n+\nII\n@b\nAC\n+\nII");
    }

    #[test]
    fn fasta_is_cut_before_a_header_line() {
        let data = b">a x\nACGT\nAC\n>b\n\nGG\n>c\nT";
        let got = chunks(data, 3);
        assert_eq!(got, [b">a x\nACGT\nAC\n".to_vec(), b">b\n\nGG\n".to_vec(), b">c\nT".to_vec()]);
    }

    #[test]
    fn newlines_are_counted() {
        let data: Vec<u8> = (0..10_000).map(|i| if i % 7 == 0 { b'\n' } else { b'A' }).collect();
        assert_eq!(count_newlines(&data), data.iter().filter(|&&b| b == b'\n').count());
    }

    /// A reader that fails after `ok` bytes.
    struct FailsAfter(Cursor<Vec<u8>>, usize);
    impl Read for FailsAfter {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.position() as usize >= self.1 {
                return Err(io::Error::other("broken"));
            }
            let n = buf.len().min(self.1 - self.0.position() as usize);
            self.0.read(&mut buf[..n])
        }
    }

    #[test]
    fn a_read_error_comes_after_the_whole_records_before_it() {
        let data: String = (0..20).map(|i| format!("@r{i}\nACGT\n+\nIIII\n")).collect();
        let mut chunker = Chunker::with_target(FailsAfter(Cursor::new(data.into_bytes()), 50), 1000, Box::new(|| 0));
        let first = chunker.next_chunk().unwrap().unwrap();
        assert_eq!(first.bytes(), b"@r0\nACGT\n+\nIIII\n@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\nIIII\n");
        assert_eq!(chunker.next_chunk().unwrap_err().to_string(), "broken");
    }
}
