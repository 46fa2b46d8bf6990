//! The parent's side of the worker protocol: an [`Evaluator`] that sends each variant to a
//! worker process and restarts the worker when a variant kills or hangs it.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use anyhow::{bail, Result};
use bcuda_autotune::evolution::{Evaluator, Outcome, Variant};

use super::worker::{Reply, Request};
use crate::gpu::tuned::switches_from;

/// The parent's side: a worker process that is restarted when a variant kills or hangs it.
pub struct WorkerEvaluator {
    pub args: Vec<String>,
    pub child: Option<(Child, ChildStdin, Receiver<String>)>,
    pub timeout: Duration,
    pub held_out: bool,
    pub repeats: usize,
    /// The generation whose training subset requests name.
    pub subset: usize,
    pub device: Option<(String, (i32, i32))>,
    /// Whether pass 1's rule gave up on the training reads, as `aln` would (the worker's hello).
    pub first_pass_gives_up: Option<bool>,
    pub restarts: usize,
}

impl WorkerEvaluator {
    /// An evaluator whose worker runs `bcuda` with `args`; a variant may take `timeout`.
    pub fn new(args: Vec<String>, timeout: Duration) -> WorkerEvaluator {
        WorkerEvaluator {
            args,
            child: None,
            timeout,
            held_out: false,
            repeats: 5,
            subset: 0,
            device: None,
            first_pass_gives_up: None,
            restarts: 0,
        }
    }

    pub fn spawn(&mut self) -> Result<()> {
        let mut child = Command::new(std::env::current_exe()?)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        // The worker loads the index and computes the reference first.
        let hello = match rx.recv_timeout(Duration::from_secs(600)) {
            Ok(hello) => hello,
            Err(RecvTimeoutError::Disconnected) => {
                let status = child.wait()?;
                bail!("the autotune worker stopped before it was ready ({status}; its error is above)");
            }
            Err(RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                bail!("the autotune worker was not ready after 600 s");
            }
        };
        if let Reply::Hello { device, cc, first_pass_gives_up } = serde_json::from_str(&hello)? {
            self.device = Some((device, cc));
            self.first_pass_gives_up = Some(first_pass_gives_up);
        }
        self.child = Some((child, stdin, rx));
        Ok(())
    }

    fn ask(&mut self, req: &Request) -> Result<Reply, String> {
        if self.child.is_none() {
            self.spawn().map_err(|e| format!("{e:#}"))?;
        }
        let (_, stdin, rx) = self.child.as_mut().unwrap();
        let line = serde_json::to_string(req).unwrap();
        let sent = writeln!(stdin, "{line}").and_then(|_| stdin.flush());
        let reply = match sent {
            Ok(()) => rx.recv_timeout(self.timeout),
            Err(_) => Err(RecvTimeoutError::Disconnected),
        };
        match reply {
            Ok(text) => {
                let reply: Reply = serde_json::from_str(&text).map_err(|e| e.to_string())?;
                if matches!(reply, Reply::Failed(_)) {
                    // A CUDA fault poisons the context: the next variant gets a fresh worker.
                    self.kill();
                }
                Ok(reply)
            }
            Err(e) => {
                // Faulted or hung: a new worker for the next variant.
                self.kill();
                Err(format!("worker {}", if e == RecvTimeoutError::Timeout { "timed out" } else { "died" }))
            }
        }
    }

    fn kill(&mut self) {
        if let Some((mut child, _, _)) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
            self.restarts += 1;
        }
    }
}

impl Evaluator for WorkerEvaluator {
    fn evaluate(&mut self, v: &Variant) -> Outcome {
        let req = Request {
            exact: v.exact.clone(),
            inexact: v.inexact.clone(),
            switches: v.switches.clone(),
            repeats: self.repeats,
            held_out: self.held_out,
            subset: self.subset,
        };
        match self.ask(&req) {
            Ok(Reply::Ran { penalty, ms }) => Outcome::Ran { penalty, ms },
            Ok(Reply::WrongHits(why)) => Outcome::WrongHits(why),
            Ok(Reply::Illegal(why)) => Outcome::Illegal(why),
            Ok(Reply::CompileError(log)) => Outcome::CompileError(log),
            Ok(Reply::Failed(e)) | Err(e) => Outcome::Fault(e),
            Ok(Reply::Hello { .. }) => Outcome::Fault("unexpected hello".into()),
        }
    }

    /// Compiles a generation's variants in parallel into the kernel cache, where the worker's
    /// compile then finds them; failures are left for the worker to report.
    fn prepare(&mut self, variants: &[Variant]) {
        use rayon::prelude::*;
        let Some((_, cc)) = self.device else { return };
        let arch = crate::gpu::arch_for(cc);
        variants.par_iter().for_each(|v| {
            if let Ok(sw) = switches_from(&v.switches) {
                let _ = crate::gpu::compile_cached(&v.exact, &sw.exact.defines(), arch);
                let _ = crate::gpu::inexact_kernels::compile(
                    v.inexact.as_deref().unwrap_or(crate::gpu::INEXACT_MATCH_CU),
                    &sw.inexact,
                    arch,
                );
            }
        });
    }

    fn begin_generation(&mut self, generation: usize) {
        self.subset = generation;
    }
}
