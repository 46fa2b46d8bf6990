//! A .sai passed from `aln` to `samse`/`sampe` in memory: the aligner writes on one thread,
//! the SAM writer reads on another as the hits come. Unbounded: `sampe` reads the two ends'
//! .sai in step, so a bound on one could stop the aligner while `sampe` waits on the other;
//! what is held is the .sai (tens of bytes per read) the SAM side has not reached yet.

use std::io::{self, Read, Write};
use std::sync::mpsc::{channel, Receiver, Sender};

/// Bytes gathered before they are passed on.
const CHUNK: usize = 1 << 16;

/// A connected writer and reader.
pub fn pipe() -> (PipeWriter, PipeReader) {
    let (tx, rx) = channel();
    (PipeWriter { tx, buf: Vec::with_capacity(CHUNK) }, PipeReader { rx, chunk: Vec::new(), at: 0 })
}

pub struct PipeWriter {
    tx: Sender<Vec<u8>>,
    buf: Vec<u8>,
}

impl Write for PipeWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK {
            self.flush()?;
        }
        Ok(data.len())
    }

    /// Passes on what is gathered; an error once the reader is gone.
    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK));
        self.tx
            .send(chunk)
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the SAM writer stopped reading the .sai"))
    }
}

/// The reader sees the end of the .sai when the writer is dropped: flushed first, so that
/// a writer dropped on an error leaves a .sai cut short, which the reader reports.
impl Drop for PipeWriter {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

pub struct PipeReader {
    rx: Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    at: usize,
}

impl Read for PipeReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.at == self.chunk.len() {
            match self.rx.recv() {
                Ok(chunk) => (self.chunk, self.at) = (chunk, 0),
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.chunk.len() - self.at);
        out[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_arrive_in_order_and_end_when_the_writer_goes() {
        let (mut w, mut r) = pipe();
        let data: Vec<u8> = (0..3 * CHUNK + 17).map(|i| i as u8).collect();
        let writer = std::thread::spawn(move || data.chunks(1000).for_each(|c| w.write_all(c).unwrap()));
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        writer.join().unwrap();
        assert_eq!(got, (0..3 * CHUNK + 17).map(|i| i as u8).collect::<Vec<u8>>());
    }

    #[test]
    fn writing_after_the_reader_went_is_a_broken_pipe() {
        let (mut w, r) = pipe();
        drop(r);
        w.write_all(&[1]).unwrap();
        assert_eq!(w.flush().unwrap_err().kind(), io::ErrorKind::BrokenPipe);
    }
}
