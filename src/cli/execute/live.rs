//! The live feed of a run this process drives ([`crate::store::live`]): what its steps do
//! before they commit, for `atomic ui` in other processes. A thread of its own writes it,
//! so the run never waits on it; a feed that cannot be written is given up quietly (the
//! store's log is the record, the feed only comes earlier).
//!
//! Everything in it is redacted like the run's log. Streamed text is held back to the last
//! whitespace before it is written, so a secret split across two deltas is whole when it
//! is redacted (secrets with spaces in them are caught once the message completes).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::ir::NodeKeyword;
use crate::providers::AgentEvent;
use crate::providers::Redactor;
use crate::runtime::{RunEvent, RunSink};
use crate::store::live::{LiveLine, LiveWriter};

/// A feed past this size starts afresh once no step is in flight.
const RESTART_AFTER: u64 = 1 << 20;

/// Text held back longer than this is written anyway.
const HOLD_AT_MOST: usize = 4096;

/// How long the writer gathers events before it writes them: one write for many events,
/// well inside what a view waits between two looks.
const GATHER: Duration = Duration::from_millis(20);

/// What the run's sink hands the writer thread.
enum Msg {
    /// An event the feed carries.
    Event(Box<RunEvent>),
    /// A step finished (its delta is not needed, so it is not copied).
    Finished(Arc<str>, Option<u32>),
}

/// The feed's writer thread.
pub(crate) struct LiveFeed {
    tx: mpsc::Sender<Msg>,
    thread: JoinHandle<()>,
}

impl LiveFeed {
    /// Starts the feed at `path`; none when it cannot be made.
    pub(crate) fn start(path: PathBuf, redactor: Redactor) -> Option<Self> {
        let writer = LiveWriter::create(&path).ok()?;
        let (tx, rx) = mpsc::channel::<Msg>();
        let thread = std::thread::Builder::new()
            .name("atomic-live-feed".to_owned())
            .spawn(move || {
                let mut feed = Feed {
                    writer: Some(writer),
                    redactor,
                    steps: HashMap::new(),
                    open: HashSet::new(),
                    held: HashMap::new(),
                };
                // What comes within a moment of the first event, then one write.
                while let Ok(message) = rx.recv() {
                    feed.take(message);
                    let until = Instant::now() + GATHER;
                    while let Some(left) = until.checked_duration_since(Instant::now()) {
                        match rx.recv_timeout(left) {
                            Ok(message) => feed.take(message),
                            Err(mpsc::RecvTimeoutError::Timeout) => break,
                            Err(mpsc::RecvTimeoutError::Disconnected) => break,
                        }
                    }
                    feed.flush();
                }
                if let Some(writer) = feed.writer {
                    writer.remove();
                }
            })
            .ok()?;
        Some(Self { tx, thread })
    }

    /// A sink that gives the feed what it carries, then everything to `inner`.
    pub(crate) fn sink(&self, inner: Arc<dyn RunSink>) -> Arc<dyn RunSink> {
        Arc::new(Tee {
            feed: self.tx.clone(),
            inner,
            open: Mutex::default(),
        })
    }

    /// Writes what is queued and removes the feed (the run stopped).
    pub(crate) fn finish(self) {
        drop(self.tx);
        let _ = self.thread.join();
    }
}

/// The feed, then the run's other sink.
struct Tee {
    feed: mpsc::Sender<Msg>,
    inner: Arc<dyn RunSink>,
    /// The steps in flight the feed was told of, so the end of any other step (a `set`
    /// in a tight loop) costs the run nothing more than a look here.
    open: Mutex<HashSet<(Arc<str>, Option<u32>)>>,
}

impl Tee {
    fn open(&self) -> std::sync::MutexGuard<'_, HashSet<(Arc<str>, Option<u32>)>> {
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl RunSink for Tee {
    fn emit(&self, event: &RunEvent) {
        let message = match event {
            RunEvent::StepStarted {
                kind, node, branch, ..
            } if takes_time(*kind) => {
                self.open().insert((Arc::clone(node), *branch));
                Some(Msg::Event(Box::new(event.clone())))
            }
            RunEvent::StepFinished { node, branch, .. } => self
                .open()
                .remove(&(Arc::clone(node), *branch))
                .then(|| Msg::Finished(Arc::clone(node), *branch)),
            RunEvent::Agent { .. }
            | RunEvent::ToolOutput { .. }
            | RunEvent::Retrying { .. }
            | RunEvent::NodeFailed { .. }
            | RunEvent::ContextWarning { .. } => Some(Msg::Event(Box::new(event.clone()))),
            _ => None,
        };
        if let Some(message) = message {
            let _ = self.feed.send(message);
        }
        self.inner.emit(event);
    }
}

/// Whether a step of this kind runs long enough to be watched before it commits (a `set`
/// or a decision commits within microseconds: the log shows it).
fn takes_time(kind: NodeKeyword) -> bool {
    matches!(
        kind,
        NodeKeyword::Agent
            | NodeKeyword::Tool
            | NodeKeyword::Subgraph
            | NodeKeyword::Parallel
            | NodeKeyword::TaskLoop
    )
}

/// The writer thread's side.
struct Feed {
    /// None once a write failed: the feed is given up.
    writer: Option<LiveWriter>,
    redactor: Redactor,
    /// The step each node is running.
    steps: HashMap<Arc<str>, u64>,
    /// Steps started and not finished (node, branch).
    open: HashSet<(Arc<str>, Option<u32>)>,
    /// Streamed text not written yet, by node and whether it is thinking.
    held: HashMap<(Arc<str>, bool), String>,
}

impl Feed {
    fn take(&mut self, message: Msg) {
        let event = match message {
            Msg::Event(event) => event,
            Msg::Finished(node, branch) => return self.finished(&node, branch),
        };
        let event = event.as_ref();
        match event {
            RunEvent::StepStarted {
                step, node, branch, ..
            } => {
                self.steps.insert(Arc::clone(node), *step);
                self.open.insert((Arc::clone(node), *branch));
                self.write(node, event);
            }
            RunEvent::Agent {
                node,
                event: AgentEvent::TextDelta { text },
            } => self.hold(node, false, text),
            RunEvent::Agent {
                node,
                event: AgentEvent::ThinkingDelta { text },
            } => self.hold(node, true, text),
            // A message's text ends with it, or with a tool call: what is held is whole.
            RunEvent::Agent {
                node,
                event:
                    AgentEvent::MessageComplete { .. }
                    | AgentEvent::ToolStart { .. }
                    | AgentEvent::ToolComplete { .. },
            }
            | RunEvent::ToolOutput { node, .. }
            | RunEvent::Retrying { node, .. }
            | RunEvent::NodeFailed { node, .. }
            | RunEvent::ContextWarning { node, .. } => {
                self.release(node, false);
                self.release(node, true);
                self.write(node, event);
            }
            // Usage and the like come mid-message (between two pieces of one word): they
            // leave what is held alone.
            RunEvent::Agent { node, .. } => self.write(node, event),
            _ => {}
        }
    }

    /// A step finished: the log has it now, so what is held for it is superseded.
    fn finished(&mut self, node: &Arc<str>, branch: Option<u32>) {
        if !self.open.remove(&(Arc::clone(node), branch)) {
            return;
        }
        self.held.retain(|(held, _), _| held != node);
        let big = self
            .writer
            .as_ref()
            .is_some_and(|w| w.len() > RESTART_AFTER);
        if self.open.is_empty() && big {
            self.restart();
        }
    }

    /// Adds streamed text, writing what is safe to: up to its last whitespace.
    fn hold(&mut self, node: &Arc<str>, thinking: bool, text: &str) {
        let held = self.held.entry((Arc::clone(node), thinking)).or_default();
        held.push_str(text);
        let cut = if held.len() > HOLD_AT_MOST {
            held.len()
        } else {
            match held.rfind(char::is_whitespace) {
                Some(at) => at + held[at..].chars().next().map_or(1, char::len_utf8),
                None => return,
            }
        };
        let ready: String = held.drain(..cut).collect();
        self.write_text(node, thinking, ready);
    }

    /// Writes all the text held for `node`.
    fn release(&mut self, node: &Arc<str>, thinking: bool) {
        if let Some(text) = self.held.remove(&(Arc::clone(node), thinking))
            && !text.is_empty()
        {
            self.write_text(node, thinking, text);
        }
    }

    fn write_text(&mut self, node: &Arc<str>, thinking: bool, text: String) {
        let event = if thinking {
            AgentEvent::ThinkingDelta { text }
        } else {
            AgentEvent::TextDelta { text }
        };
        let event = RunEvent::Agent {
            node: Arc::clone(node),
            event,
        };
        self.write(node, &event);
    }

    /// Writes `event` of `node`'s step, redacted (nothing for a node no step started).
    fn write(&mut self, node: &str, event: &RunEvent) {
        let Some(&step) = self.steps.get(node) else {
            return;
        };
        let Some(writer) = self.writer.as_mut() else {
            return;
        };
        let Ok(mut event) = serde_json::to_value(event) else {
            return;
        };
        self.redactor.redact_value(&mut event);
        if writer.append(&LiveLine { step, event }).is_err() {
            self.give_up();
        }
    }

    fn flush(&mut self) {
        if let Some(writer) = self.writer.as_mut()
            && writer.flush().is_err()
        {
            self.give_up();
        }
    }

    fn restart(&mut self) {
        if let Some(writer) = self.writer.as_mut()
            && writer.restart().is_err()
        {
            self.give_up();
        }
    }

    fn give_up(&mut self) {
        if let Some(writer) = self.writer.take() {
            writer.remove();
        }
    }
}
