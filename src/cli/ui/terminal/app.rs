//! The terminal view's state and what each key does to it. No drawing and no IO here: the
//! session feeds in what the store has (runs, the shown run's view, a step's diff) and
//! keys, and carries out the one [`Command`] a key may give (quit, show a run, answer a
//! wait, cancel, read a diff).

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::files::{DiffLine, diff_lines};
use crate::store::{RunId, RunRecord};
use crate::view::{NodeState, NodeView, RunPhase, RunView, WaitView};

/// Lines PgUp and PgDn scroll a step's output by.
const PAGE: usize = 10;

/// The furthest back the output can be scrolled, in lines (the drawing clamps to the
/// output's length; this only keeps the count finite).
const MAX_SCROLL: usize = 1_000_000;

/// One run of the runs list.
#[derive(Clone, Debug)]
pub(super) struct RunRow {
    /// The run as the store lists it.
    pub(super) record: RunRecord,
    /// What it cost, where priced (`None` while not yet read).
    pub(super) cost_usd: Option<f64>,
}

/// Which screen is up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Screen {
    /// The runs, newest first, to pick one.
    Runs,
    /// One run: its steps, the selected step's output, state and events.
    Run,
}

/// What is drawn over the screen, taking the keys while it is up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Overlay {
    /// Nothing.
    None,
    /// The keys.
    Help,
    /// Typing the answer to a wait.
    Answer(Answering),
    /// "Cancel the run?"
    ConfirmCancel,
    /// A step's diff (`D`).
    Diff(DiffPane),
}

/// The diff of what a step changed, shown over the screen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct DiffPane {
    /// The step's key.
    pub(super) step: String,
    /// The snapshot before the step.
    pub(super) before: String,
    /// The snapshot after it.
    pub(super) after: String,
    /// The paths it changed.
    pub(super) files: usize,
    /// The patch's lines once read, or why it could not be.
    pub(super) patch: Option<Result<Vec<DiffLine>, String>>,
    /// The first line shown.
    pub(super) scroll: usize,
}

/// An answer being typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Answering {
    /// The wait.
    pub(super) wait: WaitView,
    /// How `atomic resume --wait` names it, when the run waits at several.
    pub(super) name: Option<String>,
    /// The answers offered (`yes`/`no` for a yes-no question).
    pub(super) choices: Vec<String>,
    /// What has been typed.
    pub(super) input: String,
    /// Why the last Enter was refused.
    pub(super) refused: Option<String>,
}

/// What the session does after a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Command {
    /// Leave.
    Quit,
    /// Load and show this run.
    Show(RunId),
    /// `atomic resume RUN --answer ANSWER [--wait WAIT]`.
    Answer {
        /// The run.
        run: String,
        /// The wait, when the run waits at several.
        wait: Option<String>,
        /// The answer.
        answer: String,
    },
    /// `atomic cancel RUN`.
    Cancel {
        /// The run.
        run: String,
    },
    /// Read the patch between two snapshots of the run's files (for the diff pane).
    Diff {
        /// The snapshot before.
        before: String,
        /// The snapshot after.
        after: String,
    },
}

/// A line for the footer: what an action did, or why it did nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Notice {
    /// The words.
    pub(super) text: String,
    /// Whether it reports a failure.
    pub(super) error: bool,
}

/// Everything the terminal view shows and remembers.
#[derive(Debug)]
pub(super) struct App {
    /// The screen up.
    pub(super) screen: Screen,
    /// The runs, newest first.
    pub(super) runs: Vec<RunRow>,
    /// Whether the runs were read at least once.
    pub(super) runs_loaded: bool,
    /// The run under the cursor in the runs list.
    pub(super) run_cursor: usize,
    /// The run shown.
    pub(super) run: Option<RunId>,
    /// The run was named or picked (otherwise the newest is shown, and a newer one
    /// replaces it as it starts).
    pub(super) pinned: bool,
    /// The shown run's view, once read.
    pub(super) view: Option<RunView>,
    /// Why the last read failed.
    pub(super) load_error: Option<String>,
    /// The key of the selected step.
    pub(super) selected: Option<String>,
    /// Keep the selection on the running (else waiting, else failed) step.
    pub(super) follow: bool,
    /// The selected step is opened: its details and output take the whole body.
    pub(super) open: bool,
    /// Lines the output is scrolled back from its end.
    pub(super) scroll: usize,
    /// What is drawn on top.
    pub(super) overlay: Overlay,
    /// The footer's message.
    pub(super) notice: Option<Notice>,
    /// Colours are on (a terminal without `NO_COLOR`).
    pub(super) color: bool,
    /// The terminal's rows, as last drawn (the diff pane scrolls by its height).
    pub(super) height: u16,
    /// The last diff read (before, after, its lines): opening it again reads nothing.
    patch: Option<(String, String, Vec<DiffLine>)>,
}

impl App {
    /// The view of `run` (pinned), or of the newest run as runs come and go.
    pub(super) fn new(run: Option<RunId>, color: bool) -> Self {
        Self {
            screen: if run.is_some() {
                Screen::Run
            } else {
                Screen::Runs
            },
            runs: Vec::new(),
            runs_loaded: false,
            run_cursor: 0,
            pinned: run.is_some(),
            run,
            view: None,
            load_error: None,
            selected: None,
            follow: true,
            open: false,
            scroll: 0,
            overlay: Overlay::None,
            notice: None,
            color,
            height: 0,
            patch: None,
        }
    }

    /// The app right after it took `view`, as the session shows it at first.
    pub(super) fn showing(view: RunView, color: bool) -> Self {
        let mut app = Self::new(Some(RunId::new(view.run_id.clone())), color);
        let id = app.run.clone().expect("just set");
        app.take_view(&id, Ok(view));
        app
    }

    /// Takes the runs list; returns the run to load when the newest run is followed and
    /// a newer one started.
    pub(super) fn take_runs(&mut self, runs: Vec<RunRow>) -> Option<RunId> {
        self.runs = runs;
        self.runs_loaded = true;
        self.run_cursor = self.run_cursor.min(self.runs.len().saturating_sub(1));
        if self.pinned {
            return None;
        }
        let newest = self.runs.first()?.record.id.clone();
        if self.run.as_ref() == Some(&newest) {
            return None;
        }
        if self.run.is_none() {
            self.screen = Screen::Run;
        }
        self.switch(newest.clone());
        Some(newest)
    }

    /// Takes a read of `run`'s view (or why it failed).
    pub(super) fn take_view(&mut self, run: &RunId, view: Result<RunView, String>) {
        if self.run.as_ref() != Some(run) {
            return;
        }
        match view {
            Ok(view) => {
                self.load_error = None;
                let first = self.view.is_none();
                self.view = Some(view);
                if self.follow || first || self.selected_index().is_none() {
                    self.refocus();
                }
            }
            Err(error) => self.load_error = Some(error),
        }
    }

    fn switch(&mut self, run: RunId) {
        self.run = Some(run);
        self.view = None;
        self.load_error = None;
        self.selected = None;
        self.open = false;
        self.scroll = 0;
        if matches!(
            self.overlay,
            Overlay::Answer(_) | Overlay::ConfirmCancel | Overlay::Diff(_)
        ) {
            self.overlay = Overlay::None;
        }
    }

    /// The steps the list shows: the graph's nodes, without its start, end, loop tails and
    /// joins. Indices into `view.nodes`.
    pub(super) fn visible(view: &RunView) -> impl Iterator<Item = usize> + '_ {
        view.nodes
            .iter()
            .enumerate()
            .filter(|(_, node)| node.node.is_some() && !node.key.contains('#'))
            .map(|(at, _)| at)
    }

    /// The selected step's index in `view.nodes`.
    pub(super) fn selected_index(&self) -> Option<usize> {
        let view = self.view.as_ref()?;
        let key = self.selected.as_deref()?;
        Self::visible(view).find(|&at| view.nodes[at].key == key)
    }

    /// The selected step.
    pub(super) fn selected_node(&self) -> Option<&NodeView> {
        let at = self.selected_index()?;
        self.view.as_ref().map(|view| &view.nodes[at])
    }

    /// Moves the selection to the step worth watching: the running one, else the one
    /// waiting, else the one that failed, else the last that ran; keeps it if none.
    fn refocus(&mut self) {
        let Some(view) = &self.view else { return };
        let pick = |state: NodeState| Self::visible(view).find(|&at| view.nodes[at].state == state);
        let at = pick(NodeState::Running)
            .or_else(|| pick(NodeState::Waiting))
            .or_else(|| pick(NodeState::Failed))
            .or_else(|| {
                (self.selected_index().is_none())
                    .then(|| {
                        Self::visible(view)
                            .filter(|&at| view.nodes[at].attempts > 0)
                            .last()
                            .or_else(|| Self::visible(view).next())
                    })
                    .flatten()
            });
        if let Some(at) = at {
            let key = &view.nodes[at].key;
            if self.selected.as_deref() != Some(key) {
                self.selected = Some(key.clone());
                self.scroll = 0;
            }
        }
    }

    /// Takes one key press; gives what the session must do, if anything.
    pub(super) fn key(&mut self, key: KeyEvent) -> Option<Command> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && matches!(key.code, KeyCode::Char('c' | 'd')) {
            return Some(Command::Quit);
        }
        self.notice = None;
        match std::mem::replace(&mut self.overlay, Overlay::None) {
            Overlay::None => {}
            Overlay::Help => return None,
            Overlay::ConfirmCancel => return self.confirm_cancel(key),
            Overlay::Answer(answering) => return self.answering(answering, key, ctrl),
            Overlay::Diff(pane) => {
                self.diff_key(pane, key);
                return None;
            }
        }
        if key.code == KeyCode::Char('?') {
            self.overlay = Overlay::Help;
            return None;
        }
        match self.screen {
            Screen::Runs => self.runs_key(key),
            Screen::Run => self.run_key(key),
        }
    }

    fn runs_key(&mut self, key: KeyEvent) -> Option<Command> {
        let last = self.runs.len().saturating_sub(1);
        match key.code {
            KeyCode::Char('q') => return Some(Command::Quit),
            KeyCode::Esc if self.run.is_some() => self.screen = Screen::Run,
            KeyCode::Esc => return Some(Command::Quit),
            KeyCode::Up | KeyCode::Char('k') => self.run_cursor = self.run_cursor.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.run_cursor = (self.run_cursor + 1).min(last),
            KeyCode::Home | KeyCode::Char('g') => self.run_cursor = 0,
            KeyCode::End | KeyCode::Char('G') => self.run_cursor = last,
            KeyCode::Enter => {
                let id = self.runs.get(self.run_cursor)?.record.id.clone();
                self.pinned = true;
                self.screen = Screen::Run;
                if self.run.as_ref() != Some(&id) {
                    self.switch(id.clone());
                    self.follow = true;
                    return Some(Command::Show(id));
                }
            }
            _ => {}
        }
        None
    }

    fn run_key(&mut self, key: KeyEvent) -> Option<Command> {
        match key.code {
            KeyCode::Char('q') => return Some(Command::Quit),
            KeyCode::Esc if self.open => self.open = false,
            KeyCode::Esc => return Some(Command::Quit),
            KeyCode::Up | KeyCode::Char('k') => self.step_by(-1),
            KeyCode::Down | KeyCode::Char('j') => self.step_by(1),
            KeyCode::Home | KeyCode::Char('g') => self.step_by(isize::MIN),
            KeyCode::End | KeyCode::Char('G') => self.step_by(isize::MAX),
            KeyCode::PageUp | KeyCode::Char('u') => {
                self.scroll = (self.scroll + PAGE).min(MAX_SCROLL);
            }
            KeyCode::PageDown | KeyCode::Char('d') => {
                self.scroll = self.scroll.saturating_sub(PAGE)
            }
            KeyCode::Enter => {
                self.open = !self.open && self.selected_index().is_some();
                self.scroll = 0;
            }
            KeyCode::Char('f') => {
                self.follow = !self.follow;
                if self.follow {
                    self.refocus();
                }
                self.say(if self.follow {
                    "following the running step"
                } else {
                    "not following"
                });
            }
            KeyCode::Char('a') => self.ask(),
            KeyCode::Char('D') => return self.open_diff(),
            KeyCode::Char('c') => match self.view.as_ref().map(|view| view.phase) {
                Some(RunPhase::Running | RunPhase::Paused) => self.overlay = Overlay::ConfirmCancel,
                Some(phase) => self.say(&format!("the run is {}: nothing to cancel", phase.name())),
                None => {}
            },
            KeyCode::Char('r') => {
                self.screen = Screen::Runs;
                if let Some(at) = self
                    .runs
                    .iter()
                    .position(|row| Some(&row.record.id) == self.run.as_ref())
                {
                    self.run_cursor = at;
                }
            }
            _ => {}
        }
        None
    }

    /// Moves the selection `by` visible steps (saturating), which stops following.
    fn step_by(&mut self, by: isize) {
        let Some(view) = &self.view else { return };
        let visible: Vec<usize> = Self::visible(view).collect();
        if visible.is_empty() {
            return;
        }
        let now = self
            .selected_index()
            .and_then(|at| visible.iter().position(|&v| v == at))
            .unwrap_or(0);
        let to = now.saturating_add_signed(by).min(visible.len() - 1);
        let key = view.nodes[visible[to]].key.clone();
        if self.selected.as_deref() != Some(key.as_str()) {
            self.selected = Some(key);
            self.scroll = 0;
        }
        self.follow = false;
    }

    /// Opens the diff of what the selected step last changed; gives the command to read
    /// it unless it was the last one read.
    fn open_diff(&mut self) -> Option<Command> {
        let node = self.selected_node()?;
        let Some(files) = &node.files else {
            let said = format!("`{}` has no recorded files", node.key);
            self.say(&said);
            return None;
        };
        if files.changed.is_empty() {
            let said = format!("`{}` changed no files", node.key);
            self.say(&said);
            return None;
        }
        let mut pane = DiffPane {
            step: node.key.clone(),
            before: files.before.clone(),
            after: files.after.clone(),
            files: files.changed.len(),
            patch: None,
            scroll: 0,
        };
        let command = match self.patch.take() {
            Some((before, after, lines)) if before == pane.before && after == pane.after => {
                pane.patch = Some(Ok(lines));
                None
            }
            kept => {
                self.patch = kept;
                Some(Command::Diff {
                    before: pane.before.clone(),
                    after: pane.after.clone(),
                })
            }
        };
        self.overlay = Overlay::Diff(pane);
        command
    }

    /// Takes a patch read for the diff pane (or why it could not be read).
    pub(super) fn take_patch(&mut self, before: &str, after: &str, patch: Result<String, String>) {
        let Overlay::Diff(pane) = &mut self.overlay else {
            return;
        };
        if pane.before != before || pane.after != after {
            return;
        }
        pane.patch = Some(patch.map(|text| diff_lines(&text)));
    }

    /// The lines the diff pane shows at once: the screen inside its border.
    pub(super) fn diff_rows(&self) -> usize {
        usize::from(self.height.saturating_sub(2)).max(1)
    }

    /// A key while the diff pane is up: scroll it, or close it (Esc, q).
    fn diff_key(&mut self, mut pane: DiffPane, key: KeyEvent) {
        let page = self.diff_rows();
        // The furthest it scrolls: the last line on the last row.
        let last = match &pane.patch {
            Some(Ok(lines)) => lines.len().saturating_sub(page),
            _ => 0,
        };
        match key.code {
            KeyCode::Esc | KeyCode::Char('q' | 'D') => {
                // Kept, so opening it again reads nothing.
                if let Some(Ok(lines)) = pane.patch {
                    self.patch = Some((pane.before, pane.after, lines));
                }
                return;
            }
            KeyCode::Up | KeyCode::Char('k') => pane.scroll = pane.scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => pane.scroll = (pane.scroll + 1).min(last),
            KeyCode::PageUp | KeyCode::Char('u') => {
                pane.scroll = pane.scroll.saturating_sub(page);
            }
            KeyCode::PageDown | KeyCode::Char('d' | ' ') => {
                pane.scroll = (pane.scroll + page).min(last);
            }
            KeyCode::Home | KeyCode::Char('g') => pane.scroll = 0,
            KeyCode::End | KeyCode::Char('G') => pane.scroll = last,
            _ => {}
        }
        self.overlay = Overlay::Diff(pane);
    }

    /// Opens the answer prompt for the selected step's wait, else the run's first.
    fn ask(&mut self) {
        let Some(view) = &self.view else { return };
        let selected = self.selected_node().and_then(|node| node.node.clone());
        let Some(wait) = view
            .waits
            .iter()
            .find(|wait| Some(&wait.node) == selected.as_ref())
            .or_else(|| view.waits.first())
        else {
            self.say("the run is not waiting for an answer");
            return;
        };
        let choices = if wait.choices.is_empty() && wait.answer == "yes-no" {
            vec!["yes".to_owned(), "no".to_owned()]
        } else {
            wait.choices
                .iter()
                .map(|choice| choice.value.clone())
                .collect()
        };
        self.overlay = Overlay::Answer(Answering {
            name: (view.waits.len() > 1).then(|| wait.node.clone()),
            wait: wait.clone(),
            choices,
            input: String::new(),
            refused: None,
        });
    }

    fn answering(
        &mut self,
        mut answering: Answering,
        key: KeyEvent,
        ctrl: bool,
    ) -> Option<Command> {
        match key.code {
            KeyCode::Esc => {
                self.say("not answered");
                return None;
            }
            KeyCode::Enter => {
                let answer = answering.input.trim().to_owned();
                let refused = if answer.is_empty() {
                    Some("type an answer first".to_owned())
                } else if !answering.choices.is_empty()
                    && answering.wait.answer != "yes-no"
                    && !answering.choices.contains(&answer)
                {
                    Some(format!("expected one of: {}", answering.choices.join(", ")))
                } else {
                    None
                };
                if let Some(refused) = refused {
                    answering.refused = Some(refused);
                } else {
                    let run = self.run.as_ref()?.to_string();
                    self.say(&format!(
                        "answered `{}` with `{answer}`: the run resumes",
                        answering.wait.node
                    ));
                    return Some(Command::Answer {
                        run,
                        wait: answering.name,
                        answer,
                    });
                }
            }
            KeyCode::Tab | KeyCode::Down | KeyCode::BackTab | KeyCode::Up
                if !answering.choices.is_empty() =>
            {
                let n = answering.choices.len();
                let now = answering.choices.iter().position(|c| *c == answering.input);
                let back = matches!(key.code, KeyCode::BackTab | KeyCode::Up);
                let next = match (now, back) {
                    (None, false) => 0,
                    (None, true) => n - 1,
                    (Some(at), false) => (at + 1) % n,
                    (Some(at), true) => (at + n - 1) % n,
                };
                answering.input.clone_from(&answering.choices[next]);
            }
            KeyCode::Backspace => {
                answering.input.pop();
            }
            KeyCode::Char('u') if ctrl => answering.input.clear(),
            KeyCode::Char(ch) if !ctrl => answering.input.push(ch),
            _ => {}
        }
        self.overlay = Overlay::Answer(answering);
        None
    }

    fn confirm_cancel(&mut self, key: KeyEvent) -> Option<Command> {
        if matches!(key.code, KeyCode::Char('y' | 'Y')) {
            let run = self.run.as_ref()?.to_string();
            self.say("cancelling the run");
            Some(Command::Cancel { run })
        } else {
            self.say("not cancelled");
            None
        }
    }

    /// Shows `text` in the footer until the next key.
    pub(super) fn say(&mut self, text: &str) {
        self.notice = Some(Notice {
            text: text.to_owned(),
            error: false,
        });
    }

    /// Shows a failure in the footer until the next key.
    pub(super) fn warn(&mut self, text: String) {
        self.notice = Some(Notice { text, error: true });
    }
}

#[cfg(test)]
mod tests {
    use ratatui::crossterm::event::KeyEventKind;

    use super::*;
    use crate::lower::{Outline, OutlineStep};
    use crate::runtime::RunEvent;

    fn press(code: KeyCode) -> KeyEvent {
        KeyEvent {
            code,
            modifiers: KeyModifiers::NONE,
            kind: KeyEventKind::Press,
            state: ratatui::crossterm::event::KeyEventState::NONE,
        }
    }

    fn view() -> RunView {
        let step = |key: &str, kind: &'static str| OutlineStep {
            key: key.to_owned(),
            node: (!key.starts_with('#')).then(|| key.to_owned()),
            kind,
            label: key.to_owned(),
        };
        let outline = Outline {
            steps: vec![
                step("#start", "start"),
                step("draft", "tool"),
                step("approve", "wait"),
                step("ship", "tool"),
                step("#end", "end"),
            ],
            edges: Vec::new(),
        };
        let mut view = RunView::new("r1", &outline);
        view.apply(&RunEvent::StepStarted {
            step: 1,
            node: "draft".into(),
            kind: crate::ir::NodeKeyword::Tool,
            attempt: 1,
            branch: None,
        });
        view
    }

    fn paused() -> RunView {
        let mut view = view();
        view.apply(&RunEvent::StepFinished {
            step: 1,
            node: "draft".into(),
            status: crate::runtime::StepOutcome::Completed,
            delta: crate::runtime::state::Delta::default(),
            files: None,
            branch: None,
        });
        view.apply(&RunEvent::RunPaused {
            run_id: "r1".to_owned(),
            step: 2,
            node: "approve".into(),
            wait: None,
            header: None,
            prompt: "Ship it?".to_owned(),
            answer: "yes-no".to_owned(),
            choices: Vec::new(),
        });
        view
    }

    #[test]
    fn following_keeps_the_selection_on_the_live_step() {
        let mut app = App::showing(view(), false);
        assert_eq!(app.selected.as_deref(), Some("draft"));
        let id = app.run.clone().unwrap();
        app.take_view(&id, Ok(paused()));
        assert_eq!(app.selected.as_deref(), Some("approve"));
        // Moving stops following: the next read leaves the selection alone.
        app.key(press(KeyCode::Char('j')));
        assert_eq!(app.selected.as_deref(), Some("ship"));
        assert!(!app.follow);
        app.take_view(&id, Ok(paused()));
        assert_eq!(app.selected.as_deref(), Some("ship"));
        app.key(press(KeyCode::Char('f')));
        assert_eq!(app.selected.as_deref(), Some("approve"));
        // The list never leaves its ends, and skips the start and the end.
        for _ in 0..5 {
            app.key(press(KeyCode::Up));
        }
        assert_eq!(app.selected.as_deref(), Some("draft"));
        app.key(press(KeyCode::Char('G')));
        assert_eq!(app.selected.as_deref(), Some("ship"));
    }

    #[test]
    fn an_answer_is_typed_checked_and_sent() {
        let mut app = App::showing(paused(), false);
        assert_eq!(app.key(press(KeyCode::Char('a'))), None);
        let Overlay::Answer(answering) = &app.overlay else {
            panic!("the prompt is up: {:?}", app.overlay)
        };
        assert_eq!(answering.choices, ["yes", "no"]);
        // Nothing typed: refused, the prompt stays.
        assert_eq!(app.key(press(KeyCode::Enter)), None);
        assert!(matches!(&app.overlay, Overlay::Answer(a) if a.refused.is_some()));
        app.key(press(KeyCode::Tab));
        app.key(press(KeyCode::Tab));
        assert!(matches!(&app.overlay, Overlay::Answer(a) if a.input == "no"));
        app.key(press(KeyCode::Backspace));
        app.key(press(KeyCode::Backspace));
        for ch in "yes".chars() {
            app.key(press(KeyCode::Char(ch)));
        }
        assert_eq!(
            app.key(press(KeyCode::Enter)),
            Some(Command::Answer {
                run: "r1".to_owned(),
                wait: None,
                answer: "yes".to_owned()
            })
        );
        assert_eq!(app.overlay, Overlay::None);
    }

    #[test]
    fn cancel_asks_first_and_quit_leaves() {
        let mut app = App::showing(paused(), false);
        app.key(press(KeyCode::Char('c')));
        assert_eq!(app.overlay, Overlay::ConfirmCancel);
        assert_eq!(app.key(press(KeyCode::Char('n'))), None);
        assert_eq!(app.overlay, Overlay::None);
        app.key(press(KeyCode::Char('c')));
        assert_eq!(
            app.key(press(KeyCode::Char('y'))),
            Some(Command::Cancel {
                run: "r1".to_owned()
            })
        );
        // Esc closes an opened step before it quits.
        app.key(press(KeyCode::Enter));
        assert!(app.open);
        assert_eq!(app.key(press(KeyCode::Esc)), None);
        assert!(!app.open);
        assert_eq!(app.key(press(KeyCode::Esc)), Some(Command::Quit));
        assert_eq!(app.key(press(KeyCode::Char('q'))), Some(Command::Quit));
    }

    #[test]
    fn the_diff_key_reads_a_steps_patch_once_and_scrolls_it() {
        use crate::runtime::FilesChanged;
        use crate::workspace::snapshot::{Change, ChangeStatus};
        let mut view = view();
        view.apply(&RunEvent::StepFinished {
            step: 1,
            node: "draft".into(),
            status: crate::runtime::StepOutcome::Completed,
            delta: crate::runtime::state::Delta::default(),
            files: Some(FilesChanged {
                before: "b1".to_owned(),
                after: "a1".to_owned(),
                changed: vec![Change {
                    path: "out.txt".to_owned(),
                    status: ChangeStatus::Added,
                    added: Some(30),
                    removed: Some(0),
                }],
            }),
            branch: None,
        });
        let mut app = App::showing(view, false);
        // Ten rows of diff inside the pane's border.
        app.height = 12;
        assert_eq!(app.selected.as_deref(), Some("draft"));
        assert_eq!(
            app.key(press(KeyCode::Char('D'))),
            Some(Command::Diff {
                before: "b1".to_owned(),
                after: "a1".to_owned()
            })
        );
        let pane = |app: &App| match &app.overlay {
            Overlay::Diff(pane) => pane.clone(),
            other => panic!("the diff is up: {other:?}"),
        };
        // A patch of another pair of snapshots is not this pane's.
        app.take_patch("x", "y", Ok("+nope\n".to_owned()));
        assert_eq!(pane(&app).patch, None);
        let body: String = (0..30).map(|n| format!("+line {n}\n")).collect();
        app.take_patch(
            "b1",
            "a1",
            Ok(format!(
                "diff --git a/out.txt b/out.txt\n@@ -0,0 +1,30 @@\n{body}"
            )),
        );
        let lines = pane(&app).patch.expect("read").expect("a patch");
        assert_eq!(lines.len(), 32);
        assert_eq!(lines[2].tone, super::super::files::DiffTone::Added);
        // Scrolled by line, by page, to the end (the last line on the last row); `q`
        // closes the pane, not the view.
        app.key(press(KeyCode::Char('j')));
        assert_eq!(pane(&app).scroll, 1);
        app.key(press(KeyCode::PageDown));
        assert_eq!(pane(&app).scroll, 11);
        app.key(press(KeyCode::Char('G')));
        assert_eq!(pane(&app).scroll, 22);
        app.key(press(KeyCode::Char('j')));
        assert_eq!(pane(&app).scroll, 22);
        app.key(press(KeyCode::Char('g')));
        assert_eq!(pane(&app).scroll, 0);
        assert_eq!(app.key(press(KeyCode::Char('q'))), None);
        assert_eq!(app.overlay, Overlay::None);
        // Opened again: read already, nothing to do.
        assert_eq!(app.key(press(KeyCode::Char('D'))), None);
        assert!(pane(&app).patch.is_some_and(|patch| patch.is_ok()));
        assert_eq!(app.key(press(KeyCode::Esc)), None);
        assert_eq!(app.overlay, Overlay::None);
        // A step without recorded files says so.
        app.key(press(KeyCode::Char('j')));
        assert_eq!(app.key(press(KeyCode::Char('D'))), None);
        assert_eq!(app.overlay, Overlay::None);
        assert!(app.notice.is_some());
    }

    #[test]
    fn the_newest_run_is_followed_until_one_is_picked() {
        let row = |id: &str| RunRow {
            record: serde_json::from_value(serde_json::json!({
                "id": id, "workflow": "w", "path": "w.kdl", "hash": "h", "inputs": {},
                "status": "running", "created_at": 0, "updated_at": 0, "steps": 0,
                "error": null,
            }))
            .expect("a run record"),
            cost_usd: None,
        };
        let mut app = App::new(None, false);
        assert_eq!(app.screen, Screen::Runs);
        assert_eq!(
            app.take_runs(vec![row("r1")]),
            Some(RunId::new("r1".to_owned()))
        );
        assert_eq!(app.screen, Screen::Run);
        assert_eq!(app.take_runs(vec![row("r1")]), None);
        assert_eq!(
            app.take_runs(vec![row("r2"), row("r1")]),
            Some(RunId::new("r2".to_owned()))
        );
        app.key(press(KeyCode::Char('r')));
        app.key(press(KeyCode::Down));
        assert_eq!(
            app.key(press(KeyCode::Enter)),
            Some(Command::Show(RunId::new("r1".to_owned())))
        );
        assert!(app.pinned);
        assert_eq!(app.take_runs(vec![row("r3"), row("r2"), row("r1")]), None);
        assert_eq!(app.run, Some(RunId::new("r1".to_owned())));
    }
}
