//! The reporter: a thread that owns the terminal while a run goes. The runtime's sink only
//! sends events down a channel (it must never block); the thread writes JSONL for
//! `--stream`, draws the live tree or plain lines, and collects a dry run's route.

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::thread::JoinHandle;

use super::plain::Plain;
use super::route::Route;
use super::text::Paint;
use super::tree::Tree;
use crate::ir::Workflow;
use crate::providers::Redactor;
use crate::runtime::{RunEvent, RunSink, StreamModes};

/// How progress is shown on stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Display {
    /// The live tree (stderr is a terminal).
    Tree,
    /// One line per event that matters (logs, CI).
    Plain,
    /// Nothing until the summary (`--quiet`).
    Quiet,
}

/// A progress view.
pub(super) trait View {
    /// Shows one event.
    fn event(&mut self, event: &RunEvent);
    /// Shows a message from the CLI itself ("cancelling…").
    fn note(&mut self, text: &str);
    /// Clears whatever is still live.
    fn close(&mut self);
}

/// Depth of each node in the workflow's block structure (0 for top-level statements).
pub(super) type Depths = HashMap<String, usize>;

enum Msg {
    Event(Box<RunEvent>),
    Note(String),
    Finish,
}

/// What the reporter saw, handed back when it finishes.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    /// The route of a dry run, as printable lines.
    pub(crate) route: Vec<String>,
}

/// The rendering thread and the channel to it.
pub(crate) struct Reporter {
    tx: Sender<Msg>,
    thread: Option<JoinHandle<Seen>>,
}

impl Reporter {
    /// Starts rendering: `display` on stderr, events selected by `stream` as JSONL on
    /// stdout (none when `stream` selects nothing), and the route when `dry_run`.
    pub(crate) fn start(
        display: Display,
        stream: Option<StreamModes>,
        workflow: &Workflow,
        dry_run: bool,
        paint: Paint,
        redactor: Redactor,
    ) -> Self {
        let depths = depths(workflow);
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("atomic-progress".to_owned())
            .spawn(move || {
                let view: Option<Box<dyn View>> = match display {
                    Display::Tree => {
                        Some(Box::new(Tree::new(depths.clone(), paint, redactor.clone())))
                    }
                    Display::Plain => Some(Box::new(Plain::new(
                        depths.clone(),
                        paint,
                        redactor.clone(),
                    ))),
                    Display::Quiet => None,
                };
                let route = dry_run.then(|| Route::new(depths));
                render(&rx, view, stream, route, &redactor)
            })
            .ok();
        Self { tx, thread }
    }

    /// The sink to give the run.
    pub(crate) fn sink(&self) -> Arc<dyn RunSink> {
        let tx = self.tx.clone();
        Arc::new(move |event: &RunEvent| {
            // A stopped reporter only means nothing is shown any more; the run goes on.
            let _ = tx.send(Msg::Event(Box::new(event.clone())));
        })
    }

    /// A handle for notes from another task (the Ctrl-C handler).
    pub(crate) fn notes(&self) -> impl Fn(&str) + Send + Sync + 'static {
        let tx = self.tx.clone();
        move |text: &str| {
            let _ = tx.send(Msg::Note(text.to_owned()));
        }
    }

    /// Renders what is left, clears the live view and returns what was seen.
    pub(crate) fn finish(mut self) -> Seen {
        let _ = self.tx.send(Msg::Finish);
        self.thread
            .take()
            .and_then(|thread| thread.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Reporter {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = self.tx.send(Msg::Finish);
            let _ = thread.join();
        }
    }
}

fn render(
    rx: &Receiver<Msg>,
    mut view: Option<Box<dyn View>>,
    stream: Option<StreamModes>,
    mut route: Option<Route>,
    redactor: &Redactor,
) -> Seen {
    let mut out = stream.map(|modes| (modes, BufWriter::new(std::io::stdout())));
    loop {
        let msg = match rx.try_recv() {
            Ok(msg) => msg,
            Err(TryRecvError::Empty) => {
                // Nothing queued: let a reader of the stream see what we have.
                if let Some((_, out)) = &mut out {
                    let _ = out.flush();
                }
                match rx.recv() {
                    Ok(msg) => msg,
                    Err(_) => break,
                }
            }
            Err(TryRecvError::Disconnected) => break,
        };
        match msg {
            Msg::Event(event) => {
                if let Some((modes, out)) = &mut out
                    && event.selected_by(*modes)
                {
                    let _ = writeln!(out, "{}", redactor.redact(&event.to_jsonl()));
                }
                if let Some(view) = &mut view {
                    view.event(&event);
                }
                if let Some(route) = &mut route {
                    route.event(&event);
                }
            }
            Msg::Note(text) => {
                if let Some(view) = &mut view {
                    view.note(&text);
                }
            }
            Msg::Finish => break,
        }
    }
    if let Some((_, out)) = &mut out {
        let _ = out.flush();
    }
    if let Some(view) = &mut view {
        view.close();
    }
    Seen {
        route: route.map(Route::lines).unwrap_or_default(),
    }
}

/// How deep each node is nested in blocks (loops, parallels).
fn depths(workflow: &Workflow) -> Depths {
    workflow
        .nodes
        .iter()
        .map(|node| {
            let mut depth = 0;
            let mut parent = node.parent;
            while let Some(p) = parent {
                depth += 1;
                parent = workflow.node(p).parent;
                if depth > workflow.nodes.len() {
                    break;
                }
            }
            (node.id.value.clone(), depth)
        })
        .collect()
}
