//! One chunk of a read file (whole records: see [`crate::input::chunks`]) parsed into reads,
//! on any thread. Record numbers and the parser's line numbers are counted from the chunk's
//! start; the reader adds the chunks before it.

use std::io;

use needletail::errors::ParseError;
use needletail::parser::FastxReader;

use super::buffer::ReadBatch;
use super::{trimmed_len, EmptyReads, ReadOptions, MAX_READ_LEN};
use crate::input::chunks::{count_newlines, Chunk};

/// A chunk's reads, and what the reader needs to number records across chunks.
pub struct ParsedChunk {
    pub reads: ReadBatch,
    /// Records parsed, empty ones included (before `error`, when there is one).
    pub records: u64,
    /// Lines in the chunk.
    pub lines: u64,
    /// Records with an empty sequence, numbered in the chunk from 1.
    pub empty: EmptyReads,
    /// What stopped the chunk early, after `records` records.
    pub error: Option<ChunkError>,
    /// Bytes of the file read when the chunk was cut.
    pub position: u64,
}

/// Why a chunk stopped before its end.
pub enum ChunkError {
    /// A malformed record; the parser's line is counted in the chunk.
    Parse(ParseError),
    /// A read longer than [`MAX_READ_LEN`].
    TooLong { name: String, len: usize },
    /// Reading or decompressing the file failed (after the whole records before it).
    Read(io::Error),
}

impl ParsedChunk {
    fn empty() -> ParsedChunk {
        ParsedChunk {
            reads: ReadBatch::default(),
            records: 0,
            lines: 0,
            empty: EmptyReads::default(),
            error: None,
            position: 0,
        }
    }

    /// What a chunk that could not be read gives: no reads, and the error.
    pub fn read_error(error: io::Error) -> ParsedChunk {
        ParsedChunk { error: Some(ChunkError::Read(error)), ..ParsedChunk::empty() }
    }
}

/// Parses `chunk`; `first`: it starts the file, and tells its format.
pub fn parse(chunk: &Chunk, first: bool, opts: ReadOptions) -> ParsedChunk {
    let mut parsed = ParsedChunk::empty();
    parsed.position = chunk.position;
    parsed.lines = count_newlines(chunk.bytes()) as u64;
    let bytes = io::Cursor::new(chunk.bytes());
    // The file's first chunk tells its format; the others are read in it, as the rest of the
    // file would be (the same errors for a chunk that does not start as a record should).
    let mut parser: Box<dyn FastxReader + '_> = if first {
        match needletail::parse_fastx_reader(bytes) {
            Ok(parser) => parser,
            Err(e) => {
                parsed.error = Some(ChunkError::Parse(e));
                return parsed;
            }
        }
    } else if chunk.fasta {
        Box::new(needletail::parser::FastaReader::new(bytes))
    } else {
        Box::new(needletail::parser::FastqReader::new(bytes))
    };
    parsed.reads.reserve_for_bytes(chunk.bytes().len(), opts);
    while let Some(record) = parser.next() {
        parsed.records += 1;
        let record = match record {
            Ok(record) => record,
            Err(e) => {
                parsed.error = Some(ChunkError::Parse(e));
                break;
            }
        };
        match push_read(&record, opts, &mut parsed.reads) {
            Ok(true) => {}
            Ok(false) => parsed.empty.skip(parsed.records, name_of(record.id())),
            Err(e) => {
                parsed.error = Some(e);
                break;
            }
        }
    }
    parsed
}

/// The name bwa gives a read: the header up to the first whitespace, less a trailing `/1` or `/2`.
pub(super) fn name_of(id: &[u8]) -> &[u8] {
    let end = id.iter().position(|b| b.is_ascii_whitespace()).unwrap_or(id.len());
    let name = &id[..end];
    match name {
        [.., b'/', b'1' | b'2'] if name.len() > 2 => &name[..name.len() - 2],
        _ => name,
    }
}

/// Adds the read of a record as bwa_read_seq prepares it to `reads`; false for an empty
/// sequence (skipped).
fn push_read(
    record: &needletail::parser::SequenceRecord,
    opts: ReadOptions,
    reads: &mut ReadBatch,
) -> Result<bool, ChunkError> {
    let seq = record.seq();
    if seq.is_empty() {
        return Ok(false);
    }
    if seq.len() > MAX_READ_LEN {
        let name = String::from_utf8_lossy(name_of(record.id())).into_owned();
        return Err(ChunkError::TooLong { name, len: seq.len() });
    }
    let raw_qual = record.qual().unwrap_or_default();
    let qual: std::borrow::Cow<[u8]> = if opts.illumina13 {
        raw_qual.iter().map(|q| q.wrapping_sub(31)).collect::<Vec<u8>>().into()
    } else {
        raw_qual.into()
    };
    // Without qualities (FASTA) nothing is trimmed: the whole read is aligned.
    let len = if qual.is_empty() { seq.len() } else { trimmed_len(&qual, opts.trim_qual) };
    reads.push(record.id(), &seq, &qual, len, opts);
    Ok(true)
}
