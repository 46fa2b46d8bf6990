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
    input: Box<dyn BufRead + Send>,
    path: std::path::PathBuf,
    line: Vec<u8>,
    line_no: u64,
    /// The next record's header line is next in the input (the previous record's bases ended there).
    pending_header: bool,
    started: bool,
    /// Within a record's bases ([`read_bases`](Self::read_bases)): whether the input is at the
    /// start of a line, the bases given so far (with `cr`), and a '\r' held back because it
    /// may be the last byte of its line (kseq drops that one when the sequence has more).
    at_line_start: bool,
    record_len: u64,
    cr: bool,
    /// The current record's name (for errors).
    record_name: String,
}

/// True for `-`, standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Opens plain or gzip input, recognised by its magic bytes rather than its name; `-` is
/// standard input.
pub fn open_maybe_gzip(path: &Path) -> Result<Box<dyn BufRead + Send>> {
    if is_stdin(path) {
        return stdin_maybe_gzip();
    }
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

/// Standard input, plain or gzip: its first two bytes are read to tell, then put back in front.
fn stdin_maybe_gzip() -> Result<Box<dyn BufRead + Send>> {
    let name = Path::new("standard input");
    let mut magic = Vec::with_capacity(2);
    std::io::stdin().take(2).read_to_end(&mut magic).map_err(|e| IndexError::io(name, e))?;
    let gzip = magic == [0x1f, 0x8b];
    let input = std::io::Cursor::new(magic).chain(std::io::stdin());
    if gzip {
        Ok(Box::new(BufReader::with_capacity(1 << 20, flate2::read::MultiGzDecoder::new(BufReader::new(input)))))
    } else {
        Ok(Box::new(BufReader::with_capacity(1 << 20, input)))
    }
}

fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

impl FastaReader {
    pub fn open(path: &Path) -> Result<FastaReader> {
        Ok(FastaReader {
            input: open_maybe_gzip(path)?,
            path: if is_stdin(path) { "standard input".into() } else { path.to_path_buf() },
            line: Vec::new(),
            line_no: 0,
            pending_header: false,
            started: false,
            at_line_start: true,
            record_len: 0,
            cr: false,
            record_name: String::new(),
        })
    }

    /// A read error on line `line` (1-based).
    fn read_error(&self, e: std::io::Error, line: u64) -> IndexError {
        let what = if e.kind() == std::io::ErrorKind::UnexpectedEof {
            "truncated gzip input".to_string()
        } else {
            e.to_string()
        };
        IndexError::bad_fasta(&self.path, format!("line {line}: {what}"))
    }

    fn read_line(&mut self) -> Result<bool> {
        self.line.clear();
        let n = self.input.read_until(b'\n', &mut self.line).map_err(|e| self.read_error(e, self.line_no + 1))?;
        if n > 0 {
            self.line_no += 1;
        }
        Ok(n > 0)
    }

    /// The next record, or `None` at the end of the input.
    pub fn next_record(&mut self) -> Result<Option<FastaRecord>> {
        let Some((name, comment)) = self.next_header()? else { return Ok(None) };
        let mut seq = Vec::new();
        while !self.read_bases(&mut seq, usize::MAX)? {}
        Ok(Some(FastaRecord { name, comment, seq }))
    }

    /// Starts the next record: its name and comment (empty when there is none), or `None` at
    /// the end of the input. Its bases follow with [`read_bases`](Self::read_bases), to the
    /// end of the record, before the next header.
    pub fn next_header(&mut self) -> Result<Option<(String, String)>> {
        if self.pending_header {
            let read = self.read_line()?;
            debug_assert!(read && self.line.first() == Some(&b'>'));
        } else {
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
                return Err(IndexError::bad_fasta(
                    &self.path,
                    format!("line {}: not FASTA: expected a '>' header line", self.line_no),
                ));
            }
        }
        self.started = true;
        self.pending_header = false;
        let header_line = self.line_no;
        let header = &self.line[1..];
        let name_end = header.iter().position(|&b| is_c_space(b)).unwrap_or(header.len());
        // Names and comments are kept as text (they end up in SAM): other bytes would not
        // round-trip into the .ann as bwa writes them, so they are refused rather than altered.
        let not_text = |what: &str| {
            IndexError::bad_fasta(&self.path, format!("line {header_line}: the sequence {what} is not UTF-8 text"))
        };
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
            return Err(IndexError::bad_fasta(
                &self.path,
                format!("line {header_line}: header without a sequence name"),
            ));
        }
        let comment = String::from_utf8(comment).map_err(|_| not_text("comment"))?;
        (self.at_line_start, self.record_len, self.cr) = (true, 0, false);
        self.record_name.clone_from(&name);
        Ok(Some((name, comment)))
    }

    /// Appends the current record's bases to `bases` until it holds at least `limit` bytes
    /// (lines are split anywhere: memory stays bounded whatever the line length) or the record
    /// ends; returns whether it ended. As kseq: every byte of a sequence line but its '\n' is
    /// a base, empty lines are skipped, and a '\r' ending a line is dropped unless it would
    /// be the sequence's only byte; a line starting with '@' or '+' (FASTQ) is refused.
    pub fn read_bases(&mut self, bases: &mut Vec<u8>, limit: usize) -> Result<bool> {
        loop {
            if bases.len() >= limit {
                return Ok(false);
            }
            let line = if self.at_line_start { self.line_no + 1 } else { self.line_no };
            let data = match self.input.fill_buf() {
                Ok(data) => data,
                Err(e) => return Err(self.read_error(e, line)),
            };
            if data.is_empty() {
                self.end_line(bases);
                return Ok(true);
            }
            if self.at_line_start {
                match data[0] {
                    b'>' => {
                        self.pending_header = true;
                        return Ok(true);
                    }
                    b'\n' => {
                        self.input.consume(1);
                        self.line_no += 1;
                        continue;
                    }
                    b'@' | b'+' => {
                        let c = data[0] as char;
                        return Err(IndexError::bad_fasta(
                            &self.path,
                            format!(
                                "line {line}: a line starting with '{c}' in sequence {}: FASTQ is not accepted as a reference",
                                self.record_name
                            ),
                        ));
                    }
                    _ => {
                        self.line_no += 1;
                        self.at_line_start = false;
                    }
                }
            }
            let (take, line_ends) = match memchr::memchr(b'\n', data) {
                Some(i) if i <= limit - bases.len() => (i, true),
                _ => (data.len().min(limit - bases.len()), false),
            };
            if take > 0 {
                if self.cr {
                    bases.push(b'\r');
                    self.cr = false;
                }
                let body = &data[..take];
                self.record_len += take as u64;
                match body.split_last() {
                    Some((b'\r', rest)) => {
                        bases.extend_from_slice(rest);
                        self.cr = true;
                    }
                    _ => bases.extend_from_slice(body),
                }
            }
            self.input.consume(take + line_ends as usize);
            if line_ends {
                self.end_line(bases);
            }
        }
    }

    /// The end of a sequence line: a '\r' held back is dropped unless the sequence has no
    /// other byte.
    fn end_line(&mut self, bases: &mut Vec<u8>) {
        if std::mem::take(&mut self.cr) {
            if self.record_len > 1 {
                self.record_len -= 1;
            } else {
                bases.push(b'\r');
            }
        }
        self.at_line_start = true;
    }
}
