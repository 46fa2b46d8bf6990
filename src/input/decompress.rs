//! A read file's bytes decompressed ahead of the parser, recognised by their magic bytes. In a
//! regular file, BGZF (the gzip that bgzip and samtools write, blocks of at most 64 KiB) and,
//! with 8 cores or more, other gzip are decoded on several threads by rapidgzip (whose
//! marker/window decoding splits even one gzip member) from positional reads; from standard
//! input or a pipe, BGZF on several threads by noodles' multithreaded reader and other gzip (or
//! with fewer cores) on a thread of its own (ISA-L's inflate, or zlib-rs's without the `isal`
//! feature), so that the parser threads only parse; bzip2, xz and zstd (which the FASTQ parser
//! took before the parsing went on several threads) on a thread of their own as well; anything
//! else passes through as it is.

use std::io::{self, Cursor, Read};
use std::num::NonZero;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use rapidgzip_core::{DecodeError, DeflateErrorKind, GzipErrorKind, ReadAt};

/// gzip's magic bytes, and the other compressions' (as the FASTQ parser recognises them).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const BZIP2_MAGIC: [u8; 2] = [0x42, 0x5a];
const XZ_MAGIC: [u8; 2] = [0xfd, 0x37];
const ZSTD_MAGIC: [u8; 2] = [0x28, 0xb5];
/// Bytes of a gzip header that tell BGZF: deflate with an extra field whose first subfield is
/// `BC` (SAM/BAM specification, section 4.1).
const BGZF_HEAD: usize = 14;
/// Bytes per piece handed from the decompressing thread to the parser, and pieces in flight.
const PIECE: usize = 1 << 20;
const PIECES_AHEAD: usize = 4;
/// Pieces' buffers kept for reuse: a new buffer costs the decompressing thread the kernel's
/// zeroing of its pages and a fault per page (a sixth of its time in a profile).
const SPARE_PIECES: usize = PIECES_AHEAD + 2;

/// How a stream is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Bgzf,
    Gzip,
    Bzip2,
    Xz,
    Zstd,
}

fn compression_of(head: &[u8]) -> Compression {
    match head.get(..2) {
        Some(m) if m == GZIP_MAGIC => {
            let bgzf = head.len() >= BGZF_HEAD && head[2] == 8 && head[3] & 4 != 0 && head[12..14] == *b"BC";
            if bgzf {
                Compression::Bgzf
            } else {
                Compression::Gzip
            }
        }
        Some(m) if m == BZIP2_MAGIC => Compression::Bzip2,
        Some(m) if m == XZ_MAGIC => Compression::Xz,
        Some(m) if m == ZSTD_MAGIC => Compression::Zstd,
        _ => Compression::None,
    }
}

/// `input` decompressed (every member of a multi-member gzip file, as `cat a.gz b.gz`
/// makes), and how it was compressed.
pub fn decompressed(mut input: Box<dyn Read + Send>) -> io::Result<(Box<dyn Read + Send>, Compression)> {
    let mut head = Vec::with_capacity(BGZF_HEAD);
    (&mut input).take(BGZF_HEAD as u64).read_to_end(&mut head)?;
    let compression = compression_of(&head);
    let whole = Cursor::new(head).chain(input);
    let stream: Box<dyn Read + Send> = match compression {
        Compression::None => Box::new(whole),
        Compression::Bgzf => {
            let threads = std::thread::available_parallelism().unwrap_or(NonZero::<usize>::MIN);
            Box::new(noodles::bgzf::io::MultithreadedReader::with_worker_count(threads, whole))
        }
        #[cfg(feature = "isal")]
        Compression::Gzip => ahead(super::gzip::GzipMembers::new(whole)),
        #[cfg(not(feature = "isal"))]
        Compression::Gzip => ahead(flate2::read::MultiGzDecoder::new(whole)),
        Compression::Bzip2 => ahead(bzip2::read::BzDecoder::new(whole)),
        Compression::Xz => ahead(liblzma::read::XzDecoder::new(whole)),
        Compression::Zstd => ahead(zstd::stream::read::Decoder::new(whole)?),
    };
    Ok((stream, compression))
}

/// Cores from which gzip (not BGZF) in a regular file is decoded by rapidgzip. Its
/// speculative decoding costs several times a single inflater's work per byte: on FASTQ its
/// authors measured 650 MiB/s on one thread, less on two, 800 on four and 1,600 on sixteen,
/// and the parser needs a core for every 2.5M reads/s. Below this ISA-L on one thread is as
/// fast or faster (on 2 cores rapidgzip keeps to one zlib-rs thread: 8 % more CPU time than
/// ISA-L, the same rate through the parser within the noise).
const PARALLEL_GZIP_CORES: usize = 8;

/// Threads rapidgzip may decode a regular file of `compression` on (one per core: it starts
/// fewer and adds them while they pay), or `None` where another decoder is the faster. BGZF,
/// whose blocks split where they start, goes to it on any number of cores: on 2 cores it gave
/// 8 % more reads/s than noodles' reader.
fn rapidgzip_threads(compression: Compression) -> Option<usize> {
    let cores = std::thread::available_parallelism().map_or(1, NonZero::get);
    match compression {
        Compression::Bgzf => Some(cores),
        Compression::Gzip => (cores >= PARALLEL_GZIP_CORES).then_some(cores),
        _ => None,
    }
}

/// A regular file's bytes decompressed, as [`decompressed`] does a stream; BGZF, and with
/// enough cores other gzip, decoded on several threads from positional reads of the file (its
/// read cursor is left alone then).
pub fn decompressed_file<F>(file: F) -> io::Result<(Box<dyn Read + Send>, Compression)>
where
    F: Read + ReadAt + 'static,
{
    let mut head = [0; BGZF_HEAD];
    let read = read_head_at(&file, &mut head)?;
    let compression = compression_of(&head[..read]);
    if let Some(threads) = rapidgzip_threads(compression) {
        return Ok((parallel_gzip(file, threads)?, compression));
    }
    decompressed(Box::new(file))
}

/// Reads the first bytes of `file` into `head` (fewer for a shorter file): how many.
fn read_head_at(file: &impl ReadAt, head: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < head.len() {
        match file.read_at(filled as u64, &mut head[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// gzip (one member or several, BGZF too) decoded by rapidgzip on up to `threads` threads, in
/// order.
fn parallel_gzip(file: impl ReadAt + 'static, threads: usize) -> io::Result<Box<dyn Read + Send>> {
    Ok(Box::new(GzipErrorsNamed(rapidgzip_reader(file, threads)?)))
}

/// rapidgzip's reader of `file`. It decodes BGZF's blocks on several threads; one member of
/// other gzip once the file has enough 1 MiB pieces to share out (16) and a first trial finds
/// that faster than one thread, otherwise on one thread.
fn rapidgzip_reader(file: impl ReadAt + 'static, threads: usize) -> io::Result<rapidgzip_core::DecoderReader> {
    let decoder = rapidgzip_core::Decoder::builder()
        .decoder_threads(threads)
        .build()
        .map_err(|e| io::Error::other(format!("the gzip decoder's settings: {e}")))?;
    decoder.reader(file).map_err(|e| gzip_error(&e))
}

/// rapidgzip's reader, its errors said as the single-thread inflater says them.
struct GzipErrorsNamed<R>(R);

impl<R: Read> Read for GzipErrorsNamed<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf).map_err(|e| match e.get_ref().and_then(|inner| inner.downcast_ref::<DecodeError>()) {
            Some(decode) => gzip_error(decode),
            None => e,
        })
    }
}

/// A decoding error in the words of the rest of the input's errors: a cut file, damaged data,
/// a failed check or bytes after the last member.
fn gzip_error(e: &DecodeError) -> io::Error {
    match e {
        DecodeError::Io { source, .. } => io::Error::new(source.kind(), source.to_string()),
        DecodeError::InvalidGzip { reason: GzipErrorKind::Truncated, .. }
        | DecodeError::InvalidDeflate { reason: DeflateErrorKind::Truncated, .. } => io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the gzip data ends in the middle of a member (the file is cut short)",
        ),
        DecodeError::InvalidGzip { reason: GzipErrorKind::TrailingGarbage, .. } => {
            io::Error::new(io::ErrorKind::InvalidData, "bytes after the last gzip member that are not gzip")
        }
        DecodeError::ChecksumMismatch { member, .. } | DecodeError::SizeMismatch { member, .. } => io::Error::new(
            io::ErrorKind::InvalidData,
            format!("damaged gzip data (CRC-32 or length check failed in member {})", member + 1),
        ),
        // The backend's own reason (such as "unexpected DEFLATE backend status 1") says no more.
        DecodeError::InvalidDeflate { bit_offset, .. } => io::Error::new(
            io::ErrorKind::InvalidData,
            format!("damaged gzip data (invalid DEFLATE data at byte {} of the file)", bit_offset / 8),
        ),
        DecodeError::InvalidGzip { offset, reason } => io::Error::new(
            io::ErrorKind::InvalidData,
            format!("damaged gzip data ({reason}, at byte {offset} of the file)"),
        ),
        other => io::Error::other(format!("gzip decoding failed ({other})")),
    }
}

/// `decoder` run on a thread of its own, a few pieces ahead of the reader.
fn ahead(mut decoder: impl Read + Send + 'static) -> Box<dyn Read + Send> {
    let (tx, rx) = sync_channel::<io::Result<Piece>>(PIECES_AHEAD);
    let (spare_tx, spare) = sync_channel::<Vec<u8>>(SPARE_PIECES);
    let spawned = std::thread::Builder::new().name("bcuda-decompress".into()).spawn(move || loop {
        let mut bytes = spare.try_recv().unwrap_or_else(|_| vec![0; PIECE]);
        let (filled, end) = fill(&mut decoder, &mut bytes);
        // A closed channel (the reader was dropped, e.g. after a parse error) ends the thread.
        // What the piece got before an error goes first: the parser then names the record the
        // file breaks off in.
        if filled > 0 && tx.send(Ok(Piece { bytes, filled })).is_err() {
            break;
        }
        match end {
            Some(Ok(())) => break,
            Some(Err(e)) => {
                let _ = tx.send(Err(e));
                break;
            }
            None => {}
        }
    });
    spawned.expect("a thread for decompressing input");
    Box::new(Pieces { rx, spare: spare_tx, piece: Piece { bytes: Vec::new(), filled: 0 }, at: 0 })
}

/// Reads `decoder` into `buf` until it is full; with the end of the stream (`Ok`) or the
/// error met before that.
fn fill(decoder: &mut impl Read, buf: &mut [u8]) -> (usize, Option<io::Result<()>>) {
    let mut filled = 0;
    while filled < buf.len() {
        match decoder.read(&mut buf[filled..]) {
            Ok(0) => return (filled, Some(Ok(()))),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (filled, Some(Err(e))),
        }
    }
    (filled, None)
}

/// A buffer of decompressed bytes, the first `filled` of them read.
struct Piece {
    bytes: Vec<u8>,
    filled: usize,
}

/// The decompressed pieces as one stream; a decompression error is returned once, where it
/// happened, then the stream ends. The buffers read go back to the decompressing thread.
struct Pieces {
    rx: Receiver<io::Result<Piece>>,
    spare: SyncSender<Vec<u8>>,
    piece: Piece,
    at: usize,
}

impl Read for Pieces {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.piece.filled {
            match self.rx.recv() {
                Ok(Ok(piece)) => {
                    let done = std::mem::replace(&mut self.piece, piece);
                    self.at = 0;
                    if done.bytes.len() == PIECE {
                        let _ = self.spare.try_send(done.bytes);
                    }
                }
                Ok(Err(e)) => return Err(e),
                Err(_) => return Ok(0), // the thread is done: the end of the input
            }
        }
        let n = buf.len().min(self.piece.filled - self.at);
        buf[..n].copy_from_slice(&self.piece.bytes[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    fn all(input: Vec<u8>) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        decompressed(Box::new(Cursor::new(input)))?.0.read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn gzip_members_are_decompressed_in_order_and_other_input_passes_through() {
        // Over several pieces, in two members.
        let a: Vec<u8> = (0..3 * PIECE + 17).map(|i| (i * 7 % 251) as u8).collect();
        let b = b"@r\nACGT\n+\nIIII\n".to_vec();
        let mut both = gzip(&a);
        both.extend(gzip(&b));
        assert_eq!(all(both).unwrap(), [a.clone(), b.clone()].concat());
        assert_eq!(all(b.clone()).unwrap(), b, "plain input as it is");
        assert_eq!(all(vec![0x1f]).unwrap(), [0x1f], "one byte");
        assert_eq!(all(Vec::new()).unwrap(), Vec::<u8>::new());
        assert_eq!(all(gzip(b"")).unwrap(), Vec::<u8>::new(), "an empty member");
    }

    #[test]
    fn a_truncated_member_is_an_error_after_what_it_held() {
        // Cut in its first piece and in a later one.
        for len in [PIECE / 4, 2 * PIECE + PIECE / 2] {
            let data: Vec<u8> = (0..len).map(|i| (i * 13 % 256) as u8).collect();
            let gz = gzip(&data);
            let (mut reader, _) = decompressed(Box::new(Cursor::new(gz[..gz.len() / 2].to_vec()))).unwrap();
            let mut out = Vec::new();
            assert!(reader.read_to_end(&mut out).is_err(), "{len}");
            assert!(!out.is_empty() && data.starts_with(&out), "{len}: {} bytes before the error", out.len());
        }
    }

    /// FASTQ of `reads` 100 bp reads with random bases and qualities (so that it compresses
    /// about 2.5 to 1, as real reads do to 3 to 1).
    pub(crate) fn random_fastq(reads: usize, seed: u64) -> Vec<u8> {
        let mut state = seed | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut out = Vec::with_capacity(reads * 240);
        for i in 0..reads {
            out.extend_from_slice(format!("@r{i}/1\n").as_bytes());
            out.extend((0..100).map(|_| b"ACGT"[(next() % 4) as usize]));
            out.extend_from_slice(b"\n+\n");
            out.extend((0..100).map(|_| b'#' + (next() % 40) as u8));
            out.push(b'\n');
        }
        out
    }

    /// `bytes` written to a fresh temporary file.
    fn temp_file(bytes: &[u8]) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(bytes).unwrap();
        file.flush().unwrap();
        file
    }

    /// Everything the several-thread decoder gives of `bytes` in a file (whatever the cores of
    /// the machine), and the error that ended it.
    fn all_of_file(bytes: &[u8]) -> (Vec<u8>, Option<io::Error>) {
        let file = temp_file(bytes);
        let mut reader = match parallel_gzip(file.reopen().unwrap(), 4) {
            Ok(reader) => reader,
            Err(e) => return (Vec::new(), Some(e)),
        };
        let mut out = Vec::new();
        let mut buf = vec![0; 1 << 16];
        loop {
            match reader.read(&mut buf) {
                Ok(0) => return (out, None),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) => return (out, Some(e)),
            }
        }
    }

    /// A file big enough (over 16 MiB compressed) that rapidgzip shares it out over threads.
    fn big_gzip() -> (Vec<u8>, Vec<u8>) {
        let data = random_fastq(190_000, 0x9e37_79b9_7f4a_7c15);
        let gz = gzip(&data);
        assert!(gz.len() > 16 << 20, "{} bytes compressed", gz.len());
        (data, gz)
    }

    #[test]
    fn one_big_member_is_decoded_on_several_threads_in_order() {
        let (data, gz) = big_gzip();
        let cores = std::thread::available_parallelism().map_or(1, NonZero::get);
        // rapidgzip splits the member where a first trial finds that faster than one thread:
        // on 4 cores or more, unless the machine is busy (a few tries); on fewer it keeps to
        // one thread.
        let mut paths = Vec::new();
        for _ in 0..3 {
            let mut reader = rapidgzip_reader(gz.clone(), cores.max(2)).unwrap();
            let mut out = Vec::new();
            reader.read_to_end(&mut out).unwrap();
            assert!(out == data, "{} bytes of {}", out.len(), data.len());
            paths.push(reader.stats().path);
            if cores < 4 || paths.last() == Some(&rapidgzip_core::DecoderPath::MarkerWindow) {
                break;
            }
        }
        if cores >= 4 {
            assert_eq!(paths.last(), Some(&rapidgzip_core::DecoderPath::MarkerWindow), "{paths:?}");
        }
        let (out, err) = all_of_file(&gz);
        assert!(err.is_none() && out == data, "{err:?}: {} bytes of {}", out.len(), data.len());
        // And through the file reader, whichever decoder this machine's cores choose.
        let file = temp_file(&gz);
        let (mut reader, kind) = decompressed_file(file.reopen().unwrap()).unwrap();
        let mut out = Vec::new();
        reader.read_to_end(&mut out).unwrap();
        assert!(kind == Compression::Gzip && out == data, "{kind:?}: {} bytes of {}", out.len(), data.len());
    }

    #[test]
    fn members_of_a_file_are_decoded_in_order() {
        let (a, b) = (random_fastq(30_000, 5), random_fastq(120_000, 7));
        let both = [gzip(&a), gzip(b""), gzip(&b), gzip(&a), gzip(&b)].concat();
        let (out, err) = all_of_file(&both);
        assert!(err.is_none(), "{err:?}");
        assert!(out == [&a[..], &b, &a, &b].concat(), "{} bytes", out.len());
    }

    #[test]
    fn a_cut_damaged_or_unchecked_file_is_an_error_after_what_it_held() {
        let (data, gz) = big_gzip();
        for cut in [gz.len() / 3, gz.len() - 4] {
            let (out, err) = all_of_file(&gz[..cut]);
            let err = err.expect("an error");
            assert!(data.starts_with(&out), "cut at {cut}");
            assert!(err.to_string().contains("cut short"), "cut at {cut}: {err}");
            assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        }
        let mut damaged = gz.clone();
        for i in (gz.len() / 2..gz.len() / 2 + 4000).step_by(97) {
            damaged[i] ^= 0x5a;
        }
        let (out, err) = all_of_file(&damaged);
        let err = err.expect("an error");
        assert!(err.to_string().contains("damaged gzip data"), "{err}");
        assert!(out.len() < data.len(), "{} bytes before the error", out.len());
        let mut bad_crc = gz.clone();
        let n = bad_crc.len();
        bad_crc[n - 6] ^= 0x40;
        let (out, err) = all_of_file(&bad_crc);
        let err = err.expect("an error");
        assert!(err.to_string().contains("CRC-32"), "{err}");
        assert!(data.starts_with(&out));
        let (_, err) = all_of_file(&[gz, b"junk".to_vec()].concat());
        assert!(err.expect("an error").to_string().contains("not gzip"));
    }

    fn bgzf(data: &[u8]) -> Vec<u8> {
        let mut w = noodles::bgzf::io::Writer::new(Vec::new());
        w.write_all(data).unwrap();
        w.finish().unwrap()
    }

    #[test]
    fn each_compression_is_recognised_and_decompressed() {
        let data: Vec<u8> = (0..200_000).map(|i| b"ACGT\n@+I"[i * 7 % 8]).collect();
        let bz = {
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
            e.write_all(&data).unwrap();
            e.finish().unwrap()
        };
        let xz = {
            let mut e = liblzma::write::XzEncoder::new(Vec::new(), 1);
            e.write_all(&data).unwrap();
            e.finish().unwrap()
        };
        let zst = zstd::encode_all(&data[..], 1).unwrap();
        let cases = [
            (data.clone(), Compression::None),
            (gzip(&data), Compression::Gzip),
            (bgzf(&data), Compression::Bgzf),
            (bz, Compression::Bzip2),
            (xz, Compression::Xz),
            (zst, Compression::Zstd),
        ];
        for (input, kind) in cases {
            let file = temp_file(&input);
            let opened = [decompressed(Box::new(Cursor::new(input))), decompressed_file(file.reopen().unwrap())];
            for (i, opened) in opened.into_iter().enumerate() {
                let (mut reader, found) = opened.unwrap();
                let mut out = Vec::new();
                reader.read_to_end(&mut out).unwrap();
                assert_eq!((found, out.len()), (kind, data.len()), "{}", ["stream", "file"][i]);
                assert!(out == data, "{kind:?}");
            }
        }
    }

    #[test]
    fn a_truncated_bgzf_file_is_an_error_after_what_it_held() {
        let data: Vec<u8> = (0..1_000_000).map(|i| (i * 13 % 256) as u8).collect();
        let bz = bgzf(&data);
        let cut = bz[..bz.len() / 2].to_vec();
        let file = temp_file(&cut);
        let opened = [decompressed(Box::new(Cursor::new(cut))), decompressed_file(file.reopen().unwrap())];
        for (i, opened) in opened.into_iter().enumerate() {
            let (mut reader, kind) = opened.unwrap();
            assert_eq!(kind, Compression::Bgzf);
            let mut out = Vec::new();
            let err = reader.read_to_end(&mut out).unwrap_err();
            assert!(!out.is_empty() && data.starts_with(&out), "{i}: {} bytes before the error", out.len());
            if i == 1 {
                assert!(err.to_string().contains("cut short"), "{err}");
            }
        }
    }

    #[test]
    fn a_big_bgzf_file_is_decoded_in_order() {
        let data = random_fastq(100_000, 3);
        let (mut reader, kind) = decompressed_file(temp_file(&bgzf(&data)).reopen().unwrap()).unwrap();
        let mut out = Vec::new();
        reader.read_to_end(&mut out).unwrap();
        assert!(kind == Compression::Bgzf && out == data, "{kind:?}: {} bytes of {}", out.len(), data.len());
    }
}
