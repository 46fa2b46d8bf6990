//! A read file's bytes decompressed ahead of the parser, recognised by their magic bytes: BGZF
//! (the gzip that bgzip and samtools write, blocks of at most 64 KiB) on several threads
//! (noodles' multithreaded reader); other gzip on a thread of its own (ISA-L's inflate, or
//! zlib-rs's without the `isal` feature), so that the parser threads only parse; bzip2, xz and
//! zstd (which the FASTQ parser took before the parsing went on several threads) on a thread of
//! their own as well; anything else passes through as it is.

use std::io::{self, Cursor, Read};
use std::num::NonZero;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

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
mod tests {
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
            let (mut reader, found) = decompressed(Box::new(Cursor::new(input))).unwrap();
            let mut out = Vec::new();
            reader.read_to_end(&mut out).unwrap();
            assert_eq!((found, out.len()), (kind, data.len()));
            assert!(out == data, "{kind:?}");
        }
    }

    #[test]
    fn a_truncated_bgzf_file_is_an_error_after_what_it_held() {
        let data: Vec<u8> = (0..1_000_000).map(|i| (i * 13 % 256) as u8).collect();
        let bz = bgzf(&data);
        let (mut reader, kind) = decompressed(Box::new(Cursor::new(bz[..bz.len() / 2].to_vec()))).unwrap();
        assert_eq!(kind, Compression::Bgzf);
        let mut out = Vec::new();
        assert!(reader.read_to_end(&mut out).is_err());
        assert!(!out.is_empty() && data.starts_with(&out), "{} bytes before the error", out.len());
    }
}
