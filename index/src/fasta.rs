//! Reading a reference FASTA (plain or gzip) the way bwa's kseq does, so names, comments and
//! bases come out exactly as `bwa index` sees them: the name ends at the first whitespace,
//! the comment is the rest of the header line, a trailing '\r' is dropped, empty lines are
//! skipped, and every other byte of a sequence line is a base (spaces included).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::error::{IndexError, Result};

/// One FASTA record.
pub struct FastaRecord {
    pub name: String,
    /// Header text after the name's delimiter; empty when there is none.
    pub comment: String,
    pub seq: Vec<u8>,
}

pub struct FastaReader {
    input: Box<dyn BufRead>,
    path: std::path::PathBuf,
    line: Vec<u8>,
    line_no: u64,
    /// A header line already read while scanning the previous record's sequence.
    pending_header: bool,
    started: bool,
}

/// Opens plain or gzip input, recognised by its magic bytes rather than its name.
pub fn open_maybe_gzip(path: &Path) -> Result<Box<dyn BufRead>> {
    let mut file = File::open(path).map_err(|e| IndexError::io(path, e))?;
    let mut magic = [0u8; 2];
    let n = file.read(&mut magic).map_err(|e| IndexError::io(path, e))?;
    let file = File::open(path).map_err(|e| IndexError::io(path, e))?;
    if n == 2 && magic == [0x1f, 0x8b] {
        Ok(Box::new(BufReader::with_capacity(1 << 20, flate2::read::MultiGzDecoder::new(BufReader::new(file)))))
    } else {
        Ok(Box::new(BufReader::with_capacity(1 << 20, file)))
    }
}

fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

impl FastaReader {
    pub fn open(path: &Path) -> Result<FastaReader> {
        Ok(FastaReader { input: open_maybe_gzip(path)?, path: path.to_path_buf(), line: Vec::new(), line_no: 0, pending_header: false, started: false })
    }

    fn read_line(&mut self) -> Result<bool> {
        self.line.clear();
        let n = self.input.read_until(b'\n', &mut self.line).map_err(|e| {
            let what = if e.kind() == std::io::ErrorKind::UnexpectedEof { "truncated gzip input".to_string() } else { e.to_string() };
            IndexError::bad_fasta(&self.path, format!("line {}: {what}", self.line_no + 1))
        })?;
        if n > 0 {
            self.line_no += 1;
        }
        Ok(n > 0)
    }

    /// The next record, or `None` at the end of the input.
    pub fn next_record(&mut self) -> Result<Option<FastaRecord>> {
        if !self.pending_header {
            // Before the first record, only blank lines may precede the first '>'.
            loop {
                if !self.read_line()? {
                    if !self.started {
                        return Err(IndexError::bad_fasta(&self.path, "no sequences: the file is empty"));
                    }
                    return Ok(None);
                }
                if self.line.first() == Some(&b'>') {
                    break;
                }
                if self.line.iter().all(|&b| is_c_space(b)) {
                    continue;
                }
                return Err(IndexError::bad_fasta(&self.path, format!("line {}: not FASTA: expected a '>' header line", self.line_no)));
            }
        }
        self.started = true;
        self.pending_header = false;
        let header_line = self.line_no;
        let header = &self.line[1..];
        let name_end = header.iter().position(|&b| is_c_space(b)).unwrap_or(header.len());
        // Names and comments are kept as text (they end up in SAM): other bytes would not
        // round-trip into the .ann as bwa writes them, so they are refused rather than altered.
        let not_text = |what: &str| IndexError::bad_fasta(&self.path, format!("line {header_line}: the sequence {what} is not UTF-8 text"));
        let name = String::from_utf8(header[..name_end].to_vec()).map_err(|_| not_text("name"))?;
        let mut comment = Vec::new();
        if name_end < header.len() && header[name_end] != b'\n' {
            comment.extend_from_slice(&header[name_end + 1..]);
            if comment.last() == Some(&b'\n') {
                comment.pop();
            }
            if comment.len() > 1 && comment.last() == Some(&b'\r') {
                comment.pop();
            }
        }
        if name.is_empty() {
            return Err(IndexError::bad_fasta(&self.path, format!("line {header_line}: header without a sequence name")));
        }
        let comment = String::from_utf8(comment).map_err(|_| not_text("comment"))?;
        let mut seq = Vec::new();
        while self.read_line()? {
            match self.line[0] {
                b'>' => {
                    self.pending_header = true;
                    break;
                }
                b'\n' => continue,
                b'@' | b'+' => {
                    return Err(IndexError::bad_fasta(
                        &self.path,
                        format!("line {}: a line starting with '{}' in sequence {name}: FASTQ is not accepted as a reference", self.line_no, self.line[0] as char),
                    ))
                }
                _ => {}
            }
            let body = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
            seq.extend_from_slice(body);
            if seq.len() > 1 && seq.last() == Some(&b'\r') {
                seq.pop();
            }
        }
        Ok(Some(FastaRecord { name, comment, seq }))
    }
}
