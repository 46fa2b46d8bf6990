//! Dealing batches to several devices and putting their answers back in input order.
//!
//! One feeder thread per device pulls numbered batches from a shared queue (so a slower device
//! takes fewer), keeps [`AsyncAligner::depth`] on its device at once, and passes each answered batch on; the
//! writer puts them back in order with [`InOrder`]. A batch a device fails goes on without an
//! answer (the writer aligns it on the CPU); after [`MAX_FAILURES_IN_ROW`] failures in a row a
//! feeder stops, and the last one to stop hands every batch left to the CPU. Nothing here knows
//! about GPUs: the tests run it on fake devices.
//!
//! The writer holds the batches that come back before their turn. So that a slow device
//! cannot make it hold more and more while the others go on, the dealer hands out a batch only
//! within [`WINDOW_PER_SLOT`] times the devices' depths of the oldest batch not yet back: the
//! writer then never holds more than that many batches, whatever the devices' speeds.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};

/// Failed batches in a row after which a device is given up.
pub const MAX_FAILURES_IN_ROW: usize = 3;

/// Batches dealt ahead of the oldest one not yet back, per batch the devices hold at once: two
/// rounds of every device's depth, so that devices of about the same speed never wait on it.
pub const WINDOW_PER_SLOT: usize = 2;

/// The batches dealt and not yet back, beyond which the dealer waits.
pub fn window<D: AsyncAligner>(devices: &[D]) -> usize {
    WINDOW_PER_SLOT * devices.iter().map(|d| d.depth().max(2)).sum::<usize>()
}

/// Something that aligns batches asynchronously: a batch is submitted, then collected.
pub trait AsyncAligner {
    /// What the dealer hands out and the writer gets back (the device may take its inputs
    /// out of it).
    type Batch;
    /// A batch queued on the device.
    type Flight;
    type Answer;
    fn submit(&mut self, batch: &mut Self::Batch) -> Result<Self::Flight>;
    fn collect(&mut self, flight: Self::Flight) -> Result<Self::Answer>;
    /// After a failed batch (e.g. smaller buffers for the next ones).
    fn recover(&mut self, error: &anyhow::Error);
    /// Batches on the device at once (submitted and not yet collected): one copying while
    /// another computes, or more where a batch's later passes leave the device half idle.
    fn depth(&self) -> usize {
        2
    }
    /// What the device has to say of the batch it collected last, for the timeline.
    fn collected_note(&self) -> String {
        String::new()
    }
}

/// A batch with its place in the input and its number of reads.
pub struct Numbered<B> {
    pub seq: u64,
    pub reads: usize,
    pub batch: B,
}

/// A batch back from a device; `answer: None` when it has none (failed, or no device left):
/// the writer aligns all of it on the CPU.
pub struct Finished<B, A> {
    pub seq: u64,
    pub batch: B,
    pub answer: Option<A>,
}

/// What one device did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Share {
    /// Batches answered, and their reads.
    pub batches: usize,
    pub reads: usize,
    /// Batches it failed (aligned on the CPU).
    pub failed: usize,
    /// From its first batch submitted to its last collected (a finished batch may wait
    /// there for the next input: the kernel time says how long it computed).
    pub busy: Duration,
    /// Whether it was given up after failures.
    pub given_up: bool,
}

/// What the dealer and the feeders share: the batch dealt and not yet taken, the batches out
/// (dealt and not yet sent to the writer), and whether dealing is over.
struct Dealt<B> {
    ready: Option<Numbered<B>>,
    out: BTreeSet<u64>,
    /// The input is done (no batch will come).
    ended: bool,
    /// The writer stopped (or a feeder panicked): no batch is taken any more.
    closed: bool,
    /// The dealer waits for the oldest batch out: a feeder holding batches collects its
    /// oldest instead of waiting for a next one.
    window_full: bool,
}

/// What a feeder does next.
enum Next<B> {
    Batch(Numbered<B>),
    /// Collect the oldest batch it holds: the dealer waits for it (or for a batch before it).
    CollectOldest,
    Done,
}

/// The queue the feeders pull from, and how many feeders still pull.
struct Queue<B> {
    dealt: Mutex<Dealt<B>>,
    changed: Condvar,
    feeding: AtomicUsize,
}

impl<B> Queue<B> {
    fn new(feeders: usize) -> Queue<B> {
        let dealt = Dealt { ready: None, out: BTreeSet::new(), ended: false, closed: false, window_full: false };
        Queue { dealt: Mutex::new(dealt), changed: Condvar::new(), feeding: AtomicUsize::new(feeders) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Dealt<B>> {
        self.dealt.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'a>(&self, guard: std::sync::MutexGuard<'a, Dealt<B>>) -> std::sync::MutexGuard<'a, Dealt<B>> {
        self.changed.wait(guard).unwrap_or_else(|e| e.into_inner())
    }

    /// Hands out `batch` once the last one was taken and it is within `window` of the oldest
    /// batch out; false when the queue closed meanwhile.
    fn deal(&self, batch: Numbered<B>, window: usize) -> bool {
        let mut dealt = self.lock();
        loop {
            if dealt.closed {
                return false;
            }
            let in_window = dealt.out.first().is_none_or(|&oldest| batch.seq < oldest + window as u64);
            if dealt.ready.is_none() && in_window {
                break;
            }
            dealt.window_full = !in_window;
            self.changed.notify_all();
            dealt = self.wait(dealt);
        }
        dealt.window_full = false;
        dealt.out.insert(batch.seq);
        dealt.ready = Some(batch);
        self.changed.notify_all();
        true
    }

    /// No more batches.
    fn end(&self) {
        self.lock().ended = true;
        self.changed.notify_all();
    }

    /// The next batch for a feeder that `holds` batches or none.
    fn next(&self, holds: bool) -> Next<B> {
        let mut dealt = self.lock();
        loop {
            if dealt.closed {
                return Next::Done;
            }
            if let Some(batch) = dealt.ready.take() {
                self.changed.notify_all();
                return Next::Batch(batch);
            }
            if dealt.ended {
                return Next::Done;
            }
            if holds && dealt.window_full {
                return Next::CollectOldest;
            }
            dealt = self.wait(dealt);
        }
    }

    fn close(&self) {
        self.lock().closed = true;
        self.changed.notify_all();
    }

    /// Batch `seq` went to the writer.
    fn back(&self, seq: u64) {
        self.lock().out.remove(&seq);
        self.changed.notify_all();
    }
}

/// Closes the queue when its feeder panics, so that the dealer does not wait for it forever.
struct CloseOnPanic<'a, B>(&'a Queue<B>);

impl<B> Drop for CloseOnPanic<'_, B> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.close();
        }
    }
}

/// Deals `batches` to `devices` (in input order, numbered from 0) and sends every batch to
/// `done`, answered or not; with no device, all go unanswered (the CPU's). Returns each
/// device's share, or the first error of the input or of sending to the writer.
pub fn deal<D, I>(
    devices: &mut [D],
    batches: I,
    done: SyncSender<Finished<D::Batch, D::Answer>>,
    on_answer: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<Share>>
where
    D: AsyncAligner + Send,
    D::Batch: Send,
    D::Answer: Send,
    I: IntoIterator<Item = Result<(usize, D::Batch)>>,
{
    let window = window(devices);
    let queue = Queue::new(devices.len());
    if devices.is_empty() {
        return pass_to_cpu(batches, &done).map(|()| Vec::new());
    }
    std::thread::scope(|scope| {
        let feeders: Vec<_> = devices
            .iter_mut()
            .enumerate()
            .map(|(i, device)| {
                let (queue, done) = (&queue, done.clone());
                scope.spawn(move || feed(device, queue, &done, &|reads| on_answer(i, reads)))
            })
            .collect();
        drop(done);
        let mut dealt = Ok(());
        for (seq, batch) in (0u64..).zip(batches) {
            match batch {
                Ok((reads, batch)) => {
                    if !queue.deal(Numbered { seq, reads, batch }, window) {
                        break; // closed: a feeder found the writer stopped and says so
                    }
                }
                Err(e) => {
                    dealt = Err(e);
                    break;
                }
            }
        }
        queue.end();
        let shares: Vec<Result<Share>> =
            feeders.into_iter().map(|f| f.join().unwrap_or_else(|_| Err(anyhow!("a GPU feeder panicked")))).collect();
        dealt?;
        shares.into_iter().collect()
    })
}

/// No device: every batch to the writer unanswered.
fn pass_to_cpu<B, A>(
    batches: impl IntoIterator<Item = Result<(usize, B)>>,
    done: &SyncSender<Finished<B, A>>,
) -> Result<()> {
    for (seq, batch) in (0u64..).zip(batches) {
        let (_, batch) = batch?;
        done.send(Finished { seq, batch, answer: None }).map_err(|_| writer_stopped())?;
    }
    Ok(())
}

fn writer_stopped() -> anyhow::Error {
    anyhow!("the .sai writer stopped")
}

/// A batch submitted to a device, and what the submit gave.
type Submitted<D> = (Numbered<<D as AsyncAligner>::Batch>, Result<<D as AsyncAligner>::Flight>);

/// One device's loop: the next batch is submitted before the oldest one is collected, so
/// `depth` are on the device at once (one copying while another computes); the oldest is
/// collected sooner when the dealer waits for it to deal more.
fn feed<D: AsyncAligner>(
    device: &mut D,
    queue: &Queue<D::Batch>,
    done: &SyncSender<Finished<D::Batch, D::Answer>>,
    on_answer: &dyn Fn(usize),
) -> Result<Share> {
    let _guard = CloseOnPanic(queue);
    let mut share = Share::default();
    let mut failures_in_row = 0;
    let mut busy_since: Option<Instant> = None;
    let mut in_flight: VecDeque<Submitted<D>> = VecDeque::new();
    let mut finish = |device: &mut D, (n, flight): Submitted<D>, share: &mut Share| -> Result<()> {
        let answer = match flight.and_then(|f| device.collect(f)) {
            Ok(answer) => {
                super::timeline::mark(n.seq, format!("collected from the GPU{}", device.collected_note()));
                failures_in_row = 0;
                (share.batches, share.reads) = (share.batches + 1, share.reads + n.reads);
                on_answer(n.reads);
                Some(answer)
            }
            Err(e) => {
                failures_in_row += 1;
                share.failed += 1;
                device.recover(&e);
                None
            }
        };
        let seq = n.seq;
        done.send(Finished { seq, batch: n.batch, answer }).map_err(|_| writer_stopped())?;
        queue.back(seq);
        share.given_up = failures_in_row >= MAX_FAILURES_IN_ROW;
        Ok(())
    };
    let result = (|| -> Result<()> {
        loop {
            let mut next = match queue.next(!in_flight.is_empty()) {
                Next::Batch(batch) => batch,
                Next::CollectOldest => {
                    let oldest = in_flight.pop_front().expect("a feeder collects only what it holds");
                    finish(device, oldest, &mut share)?;
                    if share.given_up {
                        break;
                    }
                    continue;
                }
                Next::Done => break,
            };
            busy_since.get_or_insert_with(Instant::now);
            super::timeline::mark(next.seq, "submitted to a GPU");
            let flight = device.submit(&mut next.batch);
            super::timeline::mark(next.seq, "queued on the GPU");
            in_flight.push_back((next, flight));
            while in_flight.len() >= device.depth().max(2) {
                let oldest = in_flight.pop_front().expect("more than one in flight");
                finish(device, oldest, &mut share)?;
            }
            if share.given_up {
                break;
            }
        }
        while let Some(last) = in_flight.pop_front() {
            finish(device, last, &mut share)?;
        }
        Ok(())
    })();
    share.busy = busy_since.map_or(Duration::ZERO, |t| t.elapsed());
    if result.is_err() {
        queue.close(); // the writer stopped: so must the dealer
        return result.map(|()| share);
    }
    // The last device to give up leaves the rest of the input to the CPU.
    if queue.feeding.fetch_sub(1, Ordering::SeqCst) == 1 && share.given_up {
        while let Next::Batch(n) = queue.next(false) {
            done.send(Finished { seq: n.seq, batch: n.batch, answer: None }).map_err(|_| writer_stopped())?;
            queue.back(n.seq);
        }
    }
    Ok(share)
}

/// Puts batches numbered from 0 back in order: holds early ones until their turn.
pub struct InOrder<T> {
    next: u64,
    early: BTreeMap<u64, T>,
}

impl<T> InOrder<T> {
    pub fn new() -> InOrder<T> {
        InOrder { next: 0, early: BTreeMap::new() }
    }

    pub fn push(&mut self, seq: u64, item: T) {
        self.early.insert(seq, item);
    }

    /// The next item in order, once it has come.
    pub fn pop(&mut self) -> Option<T> {
        let item = self.early.remove(&self.next)?;
        self.next += 1;
        Some(item)
    }

    /// Items that came but whose turn has not (a gap: a batch lost, which is a bug).
    pub fn held(&self) -> usize {
        self.early.len()
    }
}

impl<T> Default for InOrder<T> {
    fn default() -> Self {
        InOrder::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::sync::mpsc::sync_channel;

    /// A CPU stand-in for a GPU: answers a batch of numbers with their squares after a random
    /// delay; fails the batches listed in `fail` (counted from 1 on this device) and every
    /// one from `fail_from` on.
    struct FakeDevice {
        rng: rand::rngs::StdRng,
        max_delay_us: u64,
        submitted: usize,
        fail: Vec<usize>,
        fail_from: Option<usize>,
        recovered: usize,
        depth: usize,
        /// Submitted and not yet collected, and the most seen at once.
        in_flight: usize,
        most_in_flight: usize,
    }

    impl FakeDevice {
        fn new(seed: u64, max_delay_us: u64) -> FakeDevice {
            FakeDevice {
                rng: rand::rngs::StdRng::seed_from_u64(seed),
                max_delay_us,
                submitted: 0,
                fail: Vec::new(),
                fail_from: None,
                recovered: 0,
                depth: 2,
                in_flight: 0,
                most_in_flight: 0,
            }
        }
    }

    fn answer(batch: &[u64]) -> Vec<u64> {
        batch.iter().map(|x| x * x).collect()
    }

    impl AsyncAligner for FakeDevice {
        type Batch = Vec<u64>;
        type Flight = (Instant, Vec<u64>);
        type Answer = Vec<u64>;
        fn submit(&mut self, batch: &mut Vec<u64>) -> Result<Self::Flight> {
            self.submitted += 1;
            if self.fail.contains(&self.submitted) || self.fail_from.is_some_and(|f| self.submitted >= f) {
                anyhow::bail!("batch {} failed on purpose", self.submitted);
            }
            self.in_flight += 1;
            self.most_in_flight = self.most_in_flight.max(self.in_flight);
            let delay = Duration::from_micros(self.rng.random_range(0..=self.max_delay_us));
            Ok((Instant::now() + delay, answer(batch)))
        }
        fn collect(&mut self, (ready, answer): Self::Flight) -> Result<Vec<u64>> {
            self.in_flight -= 1;
            std::thread::sleep(ready.saturating_duration_since(Instant::now()));
            Ok(answer)
        }
        fn recover(&mut self, _: &anyhow::Error) {
            self.recovered += 1;
        }
        fn depth(&self) -> usize {
            self.depth
        }
    }

    /// Batches of 1 to 5 numbers, numbered in order.
    fn input(n: usize) -> Vec<Vec<u64>> {
        (0..n as u64).map(|i| (0..1 + i % 5).map(|j| i * 10 + j).collect()).collect()
    }

    /// Runs the dealer and a writer that completes unanswered batches "on the CPU"; returns
    /// the batches as written, how many the CPU did, and the shares.
    fn run(devices: &mut [FakeDevice], batches: &[Vec<u64>]) -> (Vec<Vec<u64>>, usize, Vec<Share>) {
        let (written, on_cpu, shares, _) = run_holding(devices, batches);
        (written, on_cpu, shares)
    }

    /// As [`run`], with the most batches the writer held at once, waiting for their turn.
    fn run_holding(devices: &mut [FakeDevice], batches: &[Vec<u64>]) -> (Vec<Vec<u64>>, usize, Vec<Share>, usize) {
        let (tx, rx) = sync_channel::<Finished<Vec<u64>, Vec<u64>>>(1);
        let writer = std::thread::spawn(move || {
            let (mut order, mut written, mut on_cpu, mut most_held) = (InOrder::new(), Vec::new(), 0, 0);
            for f in rx {
                order.push(f.seq, f);
                most_held = most_held.max(order.held());
                while let Some(f) = order.pop() {
                    on_cpu += f.answer.is_none() as usize;
                    let answer = f.answer.unwrap_or_else(|| answer(&f.batch));
                    assert_eq!(answer, super::tests::answer(&f.batch), "answer of batch {}", f.seq);
                    written.push(f.batch);
                }
            }
            assert_eq!(order.held(), 0, "a batch never came");
            (written, on_cpu, most_held)
        });
        let input = batches.iter().map(|b| Ok((b.len(), b.clone())));
        let shares = deal(devices, input, tx, &|_, _| {}).unwrap();
        let (written, on_cpu, most_held) = writer.join().unwrap();
        (written, on_cpu, shares, most_held)
    }

    /// One device 60 times slower than three others: the writer never holds more batches than
    /// the window, where it would otherwise hold what the others do while the slow one works
    /// on one batch (hundreds).
    #[test]
    fn the_writer_holds_at_most_the_window_when_one_device_is_slower() {
        let batches = input(400);
        let mut devices: Vec<FakeDevice> = (0..4).map(|i| FakeDevice::new(i, 300)).collect();
        devices[0].max_delay_us = 18_000;
        for depth in [2, 3] {
            devices.iter_mut().for_each(|d| d.depth = depth);
            let window = window(&devices);
            let (written, on_cpu, shares, most_held) = run_holding(&mut devices, &batches);
            assert_eq!((written, on_cpu), (batches.clone(), 0));
            assert!(most_held <= window, "depth {depth}: the writer held {most_held} batches, the window is {window}");
            assert!(shares[0].batches < shares[1].batches, "{shares:?}");
        }
    }

    #[test]
    fn written_in_input_order_whatever_the_number_of_devices() {
        let batches = input(200);
        for n in [0, 1, 2, 4] {
            let mut devices: Vec<FakeDevice> = (0..n).map(|i| FakeDevice::new(i as u64, 2000)).collect();
            let (written, on_cpu, shares) = run(&mut devices, &batches);
            assert_eq!(written, batches, "{n} devices");
            assert_eq!(on_cpu, if n == 0 { batches.len() } else { 0 });
            assert_eq!(shares.iter().map(|s| s.batches).sum::<usize>(), if n == 0 { 0 } else { batches.len() });
            let reads: usize = batches.iter().map(Vec::len).sum();
            assert_eq!(shares.iter().map(|s| s.reads).sum::<usize>(), if n == 0 { 0 } else { reads });
        }
    }

    #[test]
    fn a_device_holds_its_depth_of_batches_and_they_come_out_in_order() {
        let batches = input(60);
        for depth in [2, 3, 4] {
            let mut devices = vec![FakeDevice::new(3, 1500), FakeDevice::new(4, 1500)];
            devices.iter_mut().for_each(|d| d.depth = depth);
            devices[1].fail = vec![5];
            let (written, on_cpu, _) = run(&mut devices, &batches);
            assert_eq!(written, batches, "depth {depth}");
            assert_eq!(on_cpu, 1, "depth {depth}: the failed batch, on the CPU");
            assert!(
                devices.iter().all(|d| d.most_in_flight == depth),
                "depth {depth}: {:?}",
                devices.iter().map(|d| d.most_in_flight).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn a_slower_device_takes_fewer_batches() {
        let batches = input(120);
        let mut devices = vec![FakeDevice::new(1, 200), FakeDevice::new(2, 6000)];
        let (written, _, shares) = run(&mut devices, &batches);
        assert_eq!(written, batches);
        assert!(shares[0].batches > 2 * shares[1].batches, "{shares:?}");
    }

    #[test]
    fn a_failed_batch_is_completed_on_the_cpu() {
        let batches = input(60);
        let mut devices = vec![FakeDevice::new(1, 1000), FakeDevice::new(2, 1000)];
        devices[0].fail = vec![1, 3];
        let (written, on_cpu, shares) = run(&mut devices, &batches);
        assert_eq!(written, batches);
        assert_eq!((on_cpu, shares[0].failed, shares[1].failed), (2, 2, 0));
        assert_eq!(devices[0].recovered, 2);
        assert!(!shares[0].given_up);
        assert_eq!(shares[0].batches + shares[1].batches, 58);
    }

    #[test]
    fn a_failing_device_is_given_up_and_the_others_take_the_rest() {
        let batches = input(80);
        let mut devices = vec![FakeDevice::new(1, 500), FakeDevice::new(2, 500), FakeDevice::new(3, 500)];
        devices[1].fail_from = Some(2);
        let (written, on_cpu, shares) = run(&mut devices, &batches);
        assert_eq!(written, batches);
        assert!(shares[1].given_up && !shares[0].given_up && !shares[2].given_up, "{shares:?}");
        assert_eq!(shares[1].batches, 1);
        // Its last failures: those in a row, and the one it had queued behind them.
        assert!((MAX_FAILURES_IN_ROW..=MAX_FAILURES_IN_ROW + 1).contains(&shares[1].failed), "{shares:?}");
        assert_eq!(on_cpu, shares[1].failed);
        assert_eq!(shares.iter().map(|s| s.batches + s.failed).sum::<usize>(), batches.len());
    }

    #[test]
    fn when_every_device_is_given_up_the_cpu_takes_the_rest() {
        let batches = input(50);
        let mut devices = vec![FakeDevice::new(1, 300), FakeDevice::new(2, 300)];
        devices[0].fail_from = Some(1);
        devices[1].fail_from = Some(3);
        let (written, on_cpu, shares) = run(&mut devices, &batches);
        assert_eq!(written, batches);
        assert!(shares.iter().all(|s| s.given_up), "{shares:?}");
        assert_eq!(on_cpu, batches.len() - shares[1].batches);
    }

    #[test]
    fn an_input_error_stops_dealing_and_is_returned() {
        let (tx, rx) = sync_channel::<Finished<Vec<u64>, Vec<u64>>>(1);
        let writer = std::thread::spawn(move || rx.into_iter().count());
        let input = (0..10u64).map(|i| if i == 6 { Err(anyhow!("bad record")) } else { Ok((1, vec![i])) });
        let mut devices = vec![FakeDevice::new(1, 100), FakeDevice::new(2, 100)];
        let e = deal(&mut devices, input, tx, &|_, _| {}).unwrap_err();
        assert_eq!(e.to_string(), "bad record");
        assert_eq!(writer.join().unwrap(), 6, "the batches before the error are written");
    }

    #[test]
    fn a_stopped_writer_stops_the_dealer() {
        let (tx, rx) = sync_channel::<Finished<Vec<u64>, Vec<u64>>>(1);
        let writer = std::thread::spawn(move || rx.into_iter().take(3).count());
        let mut devices = vec![FakeDevice::new(1, 100), FakeDevice::new(2, 100)];
        let e = deal(&mut devices, (0..10_000u64).map(|i| Ok((1, vec![i]))), tx, &|_, _| {}).unwrap_err();
        assert_eq!(e.to_string(), "the .sai writer stopped");
        assert_eq!(writer.join().unwrap(), 3);
    }

    /// A device that panics ends the run with an error instead of a hang.
    #[test]
    fn a_panicking_device_ends_the_run() {
        struct Panics;
        impl AsyncAligner for Panics {
            type Batch = Vec<u64>;
            type Flight = ();
            type Answer = Vec<u64>;
            fn submit(&mut self, _: &mut Vec<u64>) -> Result<()> {
                panic!("on purpose")
            }
            fn collect(&mut self, _: ()) -> Result<Vec<u64>> {
                unreachable!()
            }
            fn recover(&mut self, _: &anyhow::Error) {}
        }
        let (tx, rx) = sync_channel::<Finished<Vec<u64>, Vec<u64>>>(1);
        let writer = std::thread::spawn(move || rx.into_iter().count());
        let e = deal(&mut [Panics], (0..1000u64).map(|i| Ok((1, vec![i]))), tx, &|_, _| {}).unwrap_err();
        assert_eq!(e.to_string(), "a GPU feeder panicked");
        assert_eq!(writer.join().unwrap(), 0);
    }

    #[test]
    fn in_order_holds_early_items() {
        let mut order = InOrder::new();
        order.push(1, "b");
        order.push(2, "c");
        assert_eq!(order.pop(), None);
        order.push(0, "a");
        assert_eq!([order.pop(), order.pop(), order.pop(), order.pop()], [Some("a"), Some("b"), Some("c"), None]);
        assert_eq!(order.held(), 0);
    }
}
