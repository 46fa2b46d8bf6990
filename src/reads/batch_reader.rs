//! Reads streamed in batches from one read file or several (one after another, as their
//! concatenation), parsed on several threads: each file is decompressed ahead, cut into
//! chunks of whole records, and the chunks are parsed on a shared pool and taken back in
//! order. The next files are opened, decompressed and parsed while the reader is still on the
//! current one, a bounded number of chunks ahead.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::buffer::ReadBatch;
use super::chunk::{self, ChunkError, ParsedChunk};
use super::{EmptyReads, ReadOptions, ReadsError, MAX_READ_LEN};
use rapidgzip_core::ReadAt;

use crate::input::chunks::{Chunk, Chunker, CHUNK_BYTES};
use crate::input::decompress;
use crate::input::ordered::{self, map_in_order, InOrder};

/// Files decompressed and parsed at once: the current one and the next.
const FILES_AHEAD: usize = 2;

/// How far into the (possibly compressed) file reading has got, for progress in percent: the
/// end of the furthest bytes read, by the stream's cursor or (decoding on several threads) by
/// positional reads.
struct CountingReader<R> {
    inner: R,
    at: u64,
    furthest: Arc<AtomicU64>,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.at += n as u64;
        self.furthest.fetch_max(self.at, Ordering::Relaxed);
        Ok(n)
    }
}

impl ReadAt for CountingReader<File> {
    fn len(&self) -> std::io::Result<u64> {
        ReadAt::len(&self.inner)
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read_at(offset, buf)?;
        self.furthest.fetch_max(offset + n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Where a file's bytes come from: a regular file (which may be read at any offset, so that
/// one gzip member can be decoded on several threads), or a stream read front to back
/// (standard input, a pipe).
enum Source {
    File(File),
    Stream(Box<dyn Read + Send>),
}

/// A file opened but not yet read: its name for messages, its bytes and size (0: unknown).
struct Pending {
    path: PathBuf,
    input: Source,
    len: u64,
}

/// A file being read: its chunks in order, and its records and lines so far.
struct Reading {
    path: PathBuf,
    len: u64,
    chunks: InOrder<ParsedChunk>,
    records: u64,
    lines: u64,
    /// Bytes of the file read up to the last chunk taken.
    position: u64,
    chunks_taken: u64,
}

impl Reading {
    /// Starts decompressing, cutting and parsing `file` (on other threads).
    fn start(file: Pending, opts: ReadOptions, chunk_bytes: usize) -> Result<Reading, ReadsError> {
        let Pending { path, input, len } = file;
        let count = Arc::new(AtomicU64::new(0));
        let furthest = count.clone();
        let decompressed = match input {
            Source::File(inner) => decompress::decompressed_file(CountingReader { inner, at: 0, furthest }),
            Source::Stream(inner) => decompress::decompressed(Box::new(CountingReader { inner, at: 0, furthest })),
        };
        let (stream, _) = decompressed.map_err(|error| ReadsError::Open { path: path.clone(), error })?;
        let mut chunker = Chunker::with_target(stream, chunk_bytes, Box::new(move || count.load(Ordering::Relaxed)));
        // Each chunk's buffer goes back to the chunker once parsed.
        let recycler = chunker.recycler();
        let parse = move |(i, c): (usize, std::io::Result<Chunk>)| match c {
            Ok(c) => {
                let parsed = chunk::parse(&c, i == 0, opts);
                let _ = recycler.try_send(c.into_buffer());
                parsed
            }
            Err(e) => ParsedChunk::read_error(e),
        };
        let mut failed = false;
        // Chunks until the end of the file or its first read error.
        let items = std::iter::from_fn(move || match (failed, chunker.next_chunk()) {
            (true, _) => None,
            (false, Ok(chunk)) => chunk.map(Ok),
            (false, Err(e)) => {
                failed = true;
                Some(Err(e))
            }
        });
        let chunks = map_in_order(items.enumerate(), parse, 2 * ordered::threads() + 2);
        Ok(Reading { path, len, chunks, records: 0, lines: 0, position: 0, chunks_taken: 0 })
    }

    /// The error that stopped `chunk`, numbered in the file.
    fn error(&self, chunk: &ParsedChunk, error: ChunkError) -> ReadsError {
        let (path, record) = (self.path.clone(), self.records + chunk.records.max(1));
        match error {
            ChunkError::Parse(e)
                if self.chunks_taken == 0 && e.kind == needletail::errors::ParseErrorKind::EmptyFile =>
            {
                ReadsError::Empty { path }
            }
            ChunkError::Parse(mut e) => {
                e.position.line += self.lines;
                ReadsError::Parse { path, record, msg: e.to_string() }
            }
            ChunkError::TooLong { name, len } => ReadsError::TooLong { path, record, name, len, max: MAX_READ_LEN },
            ChunkError::Read(e) => ReadsError::Parse {
                path,
                record: self.records + chunk.records + 1,
                msg: needletail::errors::ParseError::from(e).to_string(),
            },
        }
    }
}

/// Streams read files in [`ReadBatch`]es of at most `batch_size` reads.
pub struct ReadBatchReader {
    opts: ReadOptions,
    chunk_bytes: usize,
    /// Files not started yet, the ones being read (the first is current), and the bytes of
    /// the files done, for progress.
    pending: VecDeque<Pending>,
    reading: VecDeque<Reading>,
    bytes_done: u64,
    total_len: u64,
    /// The reads of the chunk taken last that no batch has taken yet.
    left: ReadBatch,
    /// Reads delivered so far (records less the empty ones).
    reads: u64,
    empty: EmptyReads,
}

impl ReadBatchReader {
    /// Opens `path`, or standard input for `-` (as bwa); compression is recognised by its
    /// magic bytes either way.
    pub fn open(path: &Path, opts: ReadOptions) -> Result<ReadBatchReader, ReadsError> {
        ReadBatchReader::open_all(std::slice::from_ref(&path.to_path_buf()), opts)
    }

    /// Opens `paths` to be read as their concatenation (each may be compressed its own way;
    /// errors name the file and the record in it). Every file is opened now, so that a
    /// missing one is found before any reading.
    pub fn open_all(paths: &[PathBuf], opts: ReadOptions) -> Result<ReadBatchReader, ReadsError> {
        let mut files = VecDeque::new();
        for path in paths {
            files.push_back(if crate::input::is_stdin(path) {
                let input = Source::Stream(Box::new(std::io::stdin()));
                Pending { path: PathBuf::from("standard input"), input, len: 0 }
            } else {
                let file = File::open(path).map_err(|error| ReadsError::Open { path: path.to_path_buf(), error })?;
                let (regular, len) = file.metadata().map_or((false, 0), |m| (m.is_file(), m.len()));
                let input = if regular { Source::File(file) } else { Source::Stream(Box::new(file)) };
                Pending { path: path.to_path_buf(), input, len }
            });
        }
        ReadBatchReader::start(files, opts, CHUNK_BYTES)
    }

    /// Reads from `input` (plain or compressed); `name` is used in errors, `len` is its size
    /// in bytes for progress (0 when unknown).
    pub fn from_reader(
        input: Box<dyn Read + Send>,
        name: &Path,
        len: u64,
        opts: ReadOptions,
    ) -> Result<ReadBatchReader, ReadsError> {
        ReadBatchReader::from_reader_in_chunks(input, name, len, opts, CHUNK_BYTES)
    }

    /// As [`ReadBatchReader::from_reader`], cutting the input in chunks of about `chunk_bytes`.
    #[doc(hidden)]
    pub fn from_reader_in_chunks(
        input: Box<dyn Read + Send>,
        name: &Path,
        len: u64,
        opts: ReadOptions,
        chunk_bytes: usize,
    ) -> Result<ReadBatchReader, ReadsError> {
        let file = Pending { path: name.to_path_buf(), input: Source::Stream(input), len };
        ReadBatchReader::start(VecDeque::from([file]), opts, chunk_bytes)
    }

    /// Starts reading the first files. Their errors (an empty file, or one that is neither
    /// FASTQ nor FASTA, included) come with the batches: opening waits for no input, so that a
    /// command reading a pipe has its output started before the input comes.
    fn start(pending: VecDeque<Pending>, opts: ReadOptions, chunk_bytes: usize) -> Result<ReadBatchReader, ReadsError> {
        let total_len = pending.iter().map(|f| f.len).sum();
        let mut reader = ReadBatchReader {
            opts,
            chunk_bytes,
            pending,
            reading: VecDeque::new(),
            bytes_done: 0,
            total_len,
            left: ReadBatch::default(),
            reads: 0,
            empty: EmptyReads::default(),
        };
        reader.start_ahead()?;
        Ok(reader)
    }

    /// Starts files until [`FILES_AHEAD`] are being read.
    fn start_ahead(&mut self) -> Result<(), ReadsError> {
        while self.reading.len() < FILES_AHEAD {
            let Some(file) = self.pending.pop_front() else { break };
            self.reading.push_back(Reading::start(file, self.opts, self.chunk_bytes)?);
        }
        Ok(())
    }

    /// Reads delivered so far, as bwa counts them (records with an empty sequence skipped).
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// The records with an empty sequence skipped so far (numbered in their file).
    pub fn empty_reads(&self) -> &EmptyReads {
        &self.empty
    }

    /// Bytes of the files consumed and their size (0 when a file's size is unknown, as for
    /// standard input), for a percentage.
    pub fn position(&self) -> (u64, u64) {
        let current = self.reading.front().map_or(0, |f| f.position);
        (self.bytes_done + current, self.total_len)
    }

    /// The next batch (empty at the end of the input).
    pub fn next_batch(&mut self, batch_size: usize) -> Result<ReadBatch, ReadsError> {
        let mut batch = ReadBatch::default();
        self.next_batch_into(&mut batch, batch_size)?;
        Ok(batch)
    }

    /// The next batch in `batch` (its reads replaced; empty at the end of the input): a batch
    /// read into again keeps its buffers, where a new one would fault in its pages afresh.
    pub fn next_batch_into(&mut self, batch: &mut ReadBatch, batch_size: usize) -> Result<(), ReadsError> {
        batch.clear();
        while batch.len() < batch_size {
            if self.left.is_empty() {
                match self.next_chunk()? {
                    Some(reads) => self.left = reads,
                    None => break,
                }
            }
            if batch.is_empty() {
                batch.reserve_reads(batch_size.min(1 << 20), &self.left);
            }
            self.left.move_front(batch_size - batch.len(), batch);
        }
        self.reads += batch.len() as u64;
        Ok(())
    }

    /// The reads of the next chunk (of the current file, or of the next file when it is
    /// done); `None` at the end of the last file.
    fn next_chunk(&mut self) -> Result<Option<ReadBatch>, ReadsError> {
        loop {
            let Some(file) = self.reading.front_mut() else { return Ok(None) };
            let Some(chunk) = file.chunks.next() else {
                if file.chunks_taken == 0 {
                    return Err(ReadsError::Empty { path: file.path.clone() });
                }
                self.bytes_done += file.len;
                self.reading.pop_front();
                self.start_ahead()?;
                continue;
            };
            let mut chunk = chunk.map_err(|panic| ReadsError::Parse {
                path: file.path.clone(),
                record: file.records + 1,
                msg: format!("the parser failed on a chunk of the file (a bug in bcuda): {panic}"),
            })?;
            if let Some(error) = chunk.error.take() {
                return Err(file.error(&chunk, error));
            }
            if let Some((record, name)) = chunk.empty.first.take() {
                self.empty.note(chunk.empty.count, file.records + record, name);
            }
            file.records += chunk.records;
            file.lines += chunk.lines;
            file.position = chunk.position;
            file.chunks_taken += 1;
            return Ok(Some(chunk.reads));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Outcome = Result<(Vec<(String, Vec<u8>, Vec<u8>, usize)>, u64, Option<(u64, String)>), String>;

    /// Every read of `input` cut in chunks of about `chunk_bytes` and read in batches of
    /// `batch` reads (each batch read into the one before), the empty records, or the first
    /// error.
    fn read_all(input: &[u8], chunk_bytes: usize, batch: usize) -> Outcome {
        let opts = ReadOptions { trim_qual: 10, ..Default::default() };
        let cursor = Box::new(std::io::Cursor::new(input.to_vec()));
        let mut reader = ReadBatchReader::from_reader_in_chunks(cursor, Path::new("r.fq"), 0, opts, chunk_bytes)
            .map_err(|e| e.to_string())?;
        let (mut all, mut reads) = (Vec::new(), ReadBatch::default());
        loop {
            reader.next_batch_into(&mut reads, batch).map_err(|e| e.to_string())?;
            if reads.is_empty() {
                let empty = reader.empty_reads();
                return Ok((all, empty.count, empty.first.clone()));
            }
            assert!(reads.len() <= batch);
            all.extend(reads.iter().map(|r| (r.name.to_string(), r.codes.to_vec(), r.qual.to_vec(), r.len)));
        }
    }

    /// A FASTQ and a FASTA with what the parser has to get right: comments, `/1` names, CRLF,
    /// empty sequences, lines of several lengths, qualities that start with `@`.
    fn seeds() -> [Vec<u8>; 2] {
        let mut fastq = String::new();
        for i in 0..40 {
            let seq: String = (0..30 + i % 9).map(|j| b"ACGTNacgt"[(i * 7 + j * 3) % 9] as char).collect();
            let qual: String = (0..seq.len()).map(|j| (b'#' + ((i + j * 5) % 40) as u8) as char).collect();
            let end = if i % 11 == 3 { "\r\n" } else { "\n" };
            let seq = if i % 13 == 5 { String::new() } else { seq };
            let qual = if seq.is_empty() { String::new() } else { qual };
            fastq += &format!("@read{i}/{} comment {i}{end}{seq}{end}+{end}{qual}{end}", 1 + i % 2);
        }
        let mut fasta = String::new();
        for i in 0..40 {
            let seq: String = (0..20 + i % 30).map(|j| b"ACGTN"[(i + j) % 5] as char).collect();
            let lines: Vec<&str> = seq.as_bytes().chunks(7 + i % 5).map(|l| std::str::from_utf8(l).unwrap()).collect();
            fasta += &format!(">r{i} x\n{}\n{}", lines.join("\n"), if i % 6 == 0 { "\n" } else { "" });
        }
        [fastq.into_bytes(), fasta.into_bytes()]
    }

    /// The parse of a file is the same whatever the chunks it is cut into, for well-formed and
    /// damaged files alike: the same reads, empty records and errors (record and line numbers).
    #[test]
    fn chunks_give_what_the_whole_file_gives() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut below = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for (s, seed) in seeds().iter().enumerate() {
            for case in 0..300 {
                let mut input = seed.clone();
                for _ in 0..case % 4 {
                    let at = below(input.len());
                    let byte = b"\n@+>A\r #"[below(8)];
                    match below(3) {
                        0 => input[at] = byte,
                        1 => input.insert(at, byte),
                        _ => {
                            input.remove(at);
                        }
                    }
                }
                if case % 7 == 6 {
                    input.truncate(below(input.len()));
                }
                let whole = read_all(&input, usize::MAX / 4, 1 << 20);
                for chunk_bytes in [1, 5, 33, 200] {
                    let chunked = read_all(&input, chunk_bytes, 1 + below(9));
                    assert_eq!(
                        chunked,
                        whole,
                        "seed {s}, case {case}, chunks of {chunk_bytes}: {:?}",
                        String::from_utf8_lossy(&input)
                    );
                }
                if case == 0 {
                    let (reads, empty, _) = whole.as_ref().unwrap();
                    assert!(
                        reads.len() > 30 && (s == 1 || *empty == 3),
                        "seed {s}: {} reads, {empty} empty",
                        reads.len()
                    );
                }
            }
        }
    }

    #[test]
    fn several_files_read_as_one_with_errors_named_in_their_file() {
        let dir = tempfile::tempdir().unwrap();
        let [fastq, fasta] = seeds();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &fastq).unwrap();
        let files = [("a.fq", fastq.clone()), ("b.fa", fasta.clone()), ("c.fq.gz", gz.finish().unwrap())];
        let paths: Vec<PathBuf> = files
            .iter()
            .map(|(name, bytes)| {
                let path = dir.path().join(name);
                std::fs::write(&path, bytes).unwrap();
                path
            })
            .collect();
        let all_of = |paths: &[PathBuf]| -> Result<Vec<(String, Vec<u8>)>, String> {
            let mut reader = ReadBatchReader::open_all(paths, ReadOptions::default()).map_err(|e| e.to_string())?;
            let mut all = Vec::new();
            loop {
                let batch = reader.next_batch(7).map_err(|e| e.to_string())?;
                if batch.is_empty() {
                    assert_eq!(reader.position().0, reader.position().1);
                    return Ok(all);
                }
                all.extend(batch.iter().map(|r| (r.name.to_string(), r.codes.to_vec())));
            }
        };
        let one_by_one: Vec<_> = paths.iter().flat_map(|p| all_of(std::slice::from_ref(p)).unwrap()).collect();
        assert_eq!(all_of(&paths).unwrap(), one_by_one);
        // A bad record in the third file: named in that file, after its own records.
        let bad = dir.path().join("bad.fq");
        std::fs::write(&bad, [&fastq[..], b"@x\nACGT\n+\nII\n"].concat()).unwrap();
        let err = all_of(&[paths[0].clone(), paths[1].clone(), bad.clone()]).unwrap_err();
        assert!(err.starts_with(&format!("{}: record 41: ", bad.display())), "{err}");
        // An empty file among them.
        let empty = dir.path().join("empty.fq");
        std::fs::write(&empty, b"").unwrap();
        let err = all_of(&[paths[0].clone(), empty.clone()]).unwrap_err();
        assert_eq!(err, format!("{}: no reads: the file is empty", empty.display()));
        // A missing one is found at once.
        let err = ReadBatchReader::open_all(&[paths[0].clone(), dir.path().join("none.fq")], ReadOptions::default())
            .err()
            .unwrap();
        assert!(err.to_string().contains("none.fq"), "{err}");
    }

    /// Names and codes of every read of `path`, or the first error.
    fn records_of(path: &Path) -> Result<Vec<(String, Vec<u8>)>, String> {
        let mut reader = ReadBatchReader::open(path, ReadOptions::default()).map_err(|e| e.to_string())?;
        let mut all = Vec::new();
        loop {
            let batch = reader.next_batch(100_000).map_err(|e| e.to_string())?;
            if batch.is_empty() {
                return Ok(all);
            }
            all.extend(batch.iter().map(|r| (r.name.to_string(), r.codes.to_vec())));
        }
    }

    #[test]
    fn a_big_gzip_file_one_member_or_several_gives_the_reads_of_the_plain_file() {
        let gzip = |data: &[u8]| {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            std::io::Write::write_all(&mut gz, data).unwrap();
            gz.finish().unwrap()
        };
        let dir = tempfile::tempdir().unwrap();
        // Over 16 MiB compressed: shared out over the decoding threads.
        let (a, b) = (decompress::tests::random_fastq(190_000, 11), decompress::tests::random_fastq(20_000, 13));
        let write = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        };
        let one = gzip(&a);
        let plain = records_of(&write("a.fq", &a)).unwrap();
        assert_eq!(plain.len(), 190_000);
        assert!(records_of(&write("a.fq.gz", &one)).unwrap() == plain);
        let members = write("ab.fq.gz", &[gzip(&b), one.clone(), gzip(&b)].concat());
        let plain = records_of(&write("ab.fq", &[&b[..], &a, &b].concat())).unwrap();
        assert!(records_of(&members).unwrap() == plain);
        // Cut short: the error names the file and the record it breaks off in.
        let cut = write("cut.fq.gz", &one[..one.len() / 2]);
        let err = records_of(&cut).unwrap_err();
        assert!(err.starts_with(&format!("{}: record ", cut.display())) && err.contains("cut short"), "{err}");
    }
}
