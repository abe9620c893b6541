//! The chat's screen state and what keys do: the message being typed, the transcript's
//! scroll and folding, the answer being picked for what is pending (a permission, a
//! question, a workflow's wait), completion of slash commands, and Ctrl-C pressed twice
//! to quit. Keys become [`Action`]s the session carries out; nothing here does IO.

use std::time::{Duration, Instant};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::input::Input;
use super::slash::{Catalogue, Completions, complete};
use super::transcript::{Pending, Question, RunWait, Transcript};
use crate::providers::PermissionAnswer;

/// How long a first Ctrl-C waits for the second.
const QUIT_WINDOW: Duration = Duration::from_secs(2);

/// The permission answers, as the prompt offers them.
pub(crate) const PERMISSION_CHOICES: [(PermissionAnswer, &str); 3] = [
    (PermissionAnswer::Allow, "Allow once"),
    (PermissionAnswer::AllowRun, "Allow for this session"),
    (PermissionAnswer::Deny, "Deny"),
];

/// What a key asks the session to do.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Action {
    /// Send this line (a message, or a slash command).
    Send(String),
    /// Answer the pending permission.
    Permission(PermissionAnswer),
    /// Answer the agent's pending question, one answer per item.
    Answer(Vec<String>),
    /// Answer the workflow run's wait.
    AnswerWait {
        /// The wait.
        wait: String,
        /// The answer.
        answer: String,
    },
    /// Stop the agent's turn (the session goes on).
    Interrupt,
    /// Leave the chat.
    Quit,
}

/// What is asked of the person now, as the chat shows it: the conversation's pending
/// permission or question first, else the workflow run's wait.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Asked {
    /// A permission.
    Permission(crate::providers::PermissionAsk),
    /// The agent's question.
    Question(Question),
    /// A workflow's wait.
    Wait(RunWait),
}

impl Asked {
    /// What is asked, from the conversation and the run.
    pub(crate) fn of(transcript: &Transcript, wait: Option<&RunWait>) -> Option<Self> {
        match &transcript.pending {
            Some(Pending::Permission(ask)) => Some(Self::Permission(ask.clone())),
            Some(Pending::Question(question)) => Some(Self::Question(question.clone())),
            None => wait.cloned().map(Self::Wait),
        }
    }

    /// The question being answered (a permission has fixed choices).
    pub(crate) fn question(&self) -> Option<&Question> {
        match self {
            Self::Permission(_) => None,
            Self::Question(question) => Some(question),
            Self::Wait(wait) => Some(&wait.question),
        }
    }

    /// How many options the current item offers (`item`: the question's item now asked).
    pub(crate) fn options(&self, item: usize) -> usize {
        match self {
            Self::Permission(_) => PERMISSION_CHOICES.len(),
            other => other
                .question()
                .and_then(|question| question.items.get(item))
                .map_or(0, |item| item.options.len()),
        }
    }
}

/// The chat's screen state.
#[derive(Debug, Default)]
pub(crate) struct App {
    /// The message being typed.
    pub(crate) input: Input,
    /// Rows scrolled up from the end of the transcript (0: following the end).
    pub(crate) scroll: u16,
    /// Whether tool inputs and results and thinking are shown whole (Ctrl-O).
    pub(crate) expanded: bool,
    /// The option selected for what is asked.
    pub(crate) choice: usize,
    /// Options ticked, for a question that takes several.
    pub(crate) ticked: Vec<usize>,
    /// Which item of a question is being answered, and the answers so far.
    pub(crate) item: usize,
    /// The answers to the items before [`App::item`].
    pub(crate) answers: Vec<String>,
    /// Completion of a slash command as it is typed, and the candidate selected.
    pub(crate) completions: Option<Completions>,
    /// The selected completion candidate.
    pub(crate) completion: usize,
    /// When Ctrl-C was pressed once (a second within [`QUIT_WINDOW`] quits).
    quit_armed: Option<Instant>,
    /// A short message over the input (Ctrl-C once, a refused answer).
    pub(crate) flash: Option<String>,
}

impl App {
    /// What `key` does, given what is asked now and whether the agent is working.
    pub(crate) fn key(
        &mut self,
        key: KeyEvent,
        asked: Option<&Asked>,
        busy: bool,
        catalogue: &Catalogue,
    ) -> Option<Action> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        if ctrl && key.code == KeyCode::Char('c') {
            return self.ctrl_c();
        }
        self.quit_armed = None;
        self.flash = None;
        match key.code {
            KeyCode::Esc => {
                if self.completions.take().is_some() {
                    return None;
                }
                return match asked {
                    Some(Asked::Permission(_)) => {
                        self.reset_answer();
                        Some(Action::Permission(PermissionAnswer::Deny))
                    }
                    _ if busy => Some(Action::Interrupt),
                    _ => None,
                };
            }
            KeyCode::Enter if shift || alt => self.input.insert("\n"),
            KeyCode::Char('j') if ctrl => self.input.insert("\n"),
            KeyCode::Enter => return self.enter(asked, catalogue),
            KeyCode::Tab => {
                self.accept_completion();
                return None;
            }
            KeyCode::Char(' ')
                if self.input.is_empty()
                    && asked
                        .and_then(Asked::question)
                        .and_then(|question| question.items.get(self.item))
                        .is_some_and(|item| item.multi) =>
            {
                match self.ticked.iter().position(|&ticked| ticked == self.choice) {
                    Some(at) => {
                        self.ticked.remove(at);
                    }
                    None => self.ticked.push(self.choice),
                }
            }
            KeyCode::Char(digit @ '1'..='9')
                if self.input.is_empty() && asked.is_some_and(|a| a.options(self.item) > 0) =>
            {
                let picked = (digit as usize) - ('1' as usize);
                if let Some(asked) = asked
                    && picked < asked.options(self.item)
                {
                    self.choice = picked;
                    return self.enter(Some(asked), catalogue);
                }
            }
            KeyCode::Char('o') if ctrl => self.expanded = !self.expanded,
            KeyCode::Char('a') if ctrl => self.input.home(),
            KeyCode::Char('e') if ctrl => self.input.end(),
            KeyCode::Char('u') if ctrl => self.input.kill_to_start(),
            KeyCode::Char('k') if ctrl => self.input.kill_to_end(),
            KeyCode::Char('w') if ctrl => self.input.kill_word(),
            KeyCode::Backspace if alt || ctrl => self.input.kill_word(),
            KeyCode::Char(c) if !ctrl => {
                let mut text = [0u8; 4];
                self.input.insert(c.encode_utf8(&mut text));
            }
            KeyCode::Backspace => self.input.backspace(),
            KeyCode::Delete => self.input.delete(),
            KeyCode::Left if ctrl || alt => self.input.word_left(),
            KeyCode::Right if ctrl || alt => self.input.word_right(),
            KeyCode::Left => self.input.left(),
            KeyCode::Right => self.input.right(),
            KeyCode::Home => self.input.home(),
            KeyCode::End => self.input.end(),
            KeyCode::Up => self.up(asked),
            KeyCode::Down => self.down(asked),
            KeyCode::PageUp => self.scroll = self.scroll.saturating_add(10),
            KeyCode::PageDown => self.scroll = self.scroll.saturating_sub(10),
            _ => return None,
        }
        self.refresh_completions(catalogue);
        None
    }

    /// Text pasted (bracketed paste): typed as is, newlines kept.
    pub(crate) fn paste(&mut self, text: &str, catalogue: &Catalogue) {
        self.input.insert(text);
        self.refresh_completions(catalogue);
    }

    /// A new thing is asked: nothing picked yet.
    pub(crate) fn reset_answer(&mut self) {
        self.choice = 0;
        self.ticked.clear();
        self.item = 0;
        self.answers.clear();
    }

    fn ctrl_c(&mut self) -> Option<Action> {
        if !self.input.is_empty() {
            self.input.set("");
            self.completions = None;
            return None;
        }
        match self.quit_armed {
            Some(at) if at.elapsed() < QUIT_WINDOW => Some(Action::Quit),
            _ => {
                self.quit_armed = Some(Instant::now());
                self.flash = Some("Press Ctrl-C again to quit".to_owned());
                None
            }
        }
    }

    fn up(&mut self, asked: Option<&Asked>) {
        if let Some(completions) = &self.completions
            && !completions.candidates.is_empty()
        {
            self.completion = self.completion.saturating_sub(1);
        } else if self.input.is_empty()
            && let Some(asked) = asked
            && asked.options(self.item) > 0
        {
            self.choice = self.choice.saturating_sub(1);
        } else {
            self.input.up();
        }
    }

    fn down(&mut self, asked: Option<&Asked>) {
        if let Some(completions) = &self.completions
            && !completions.candidates.is_empty()
        {
            self.completion = (self.completion + 1).min(completions.candidates.len() - 1);
        } else if self.input.is_empty()
            && let Some(asked) = asked
            && asked.options(self.item) > 0
        {
            self.choice = (self.choice + 1).min(asked.options(self.item) - 1);
        } else {
            self.input.down();
        }
    }

    /// Enter: answers what is asked (the option selected, or the typed text), or sends the
    /// message; a slash command's name half typed is completed first.
    fn enter(&mut self, asked: Option<&Asked>, catalogue: &Catalogue) -> Option<Action> {
        if let Some(asked) = asked {
            return self.answer(asked);
        }
        if self.completion_pending() {
            self.accept_completion();
            self.refresh_completions(catalogue);
            return None;
        }
        if self.input.text().trim().is_empty() {
            return None;
        }
        self.completions = None;
        self.scroll = 0;
        Some(Action::Send(self.input.take()))
    }

    fn answer(&mut self, asked: &Asked) -> Option<Action> {
        let typed = self.input.text().trim().to_owned();
        let Some(question) = asked.question() else {
            let (answer, _) = PERMISSION_CHOICES.get(self.choice)?;
            self.reset_answer();
            return Some(Action::Permission(*answer));
        };
        let item = question.items.get(self.item)?;
        let answer = if !typed.is_empty() {
            self.input.take()
        } else if item.multi {
            let mut ticked = self.ticked.clone();
            if ticked.is_empty() {
                ticked.push(self.choice);
            }
            ticked.sort_unstable();
            ticked
                .iter()
                .filter_map(|&at| item.options.get(at).map(|option| option.label.clone()))
                .collect::<Vec<_>>()
                .join(", ")
        } else {
            item.options.get(self.choice)?.label.clone()
        };
        self.answers.push(answer);
        self.choice = 0;
        self.ticked.clear();
        self.item += 1;
        if self.item < question.items.len() {
            return None;
        }
        let answers = std::mem::take(&mut self.answers);
        self.reset_answer();
        match asked {
            Asked::Wait(wait) => Some(Action::AnswerWait {
                wait: wait.wait.clone(),
                answer: answers.into_iter().next().unwrap_or_default(),
            }),
            _ => Some(Action::Answer(answers)),
        }
    }

    /// Whether Enter should complete rather than send: a slash command's name is being
    /// typed and the selected candidate is not what is typed.
    fn completion_pending(&self) -> bool {
        let Some(completions) = &self.completions else {
            return false;
        };
        completions
            .candidates
            .get(self.completion)
            .is_some_and(|candidate| {
                self.input.text().get(completions.replace.clone())
                    != Some(candidate.replacement.as_str())
            })
    }

    fn accept_completion(&mut self) {
        let Some(completions) = &self.completions else {
            return;
        };
        if let Some(candidate) = completions.candidates.get(self.completion) {
            let (text, cursor) = completions.accept(self.input.text(), candidate);
            self.input.set_at(text, cursor);
        }
    }

    fn refresh_completions(&mut self, catalogue: &Catalogue) {
        let text = self.input.text();
        if !text.starts_with('/') || text.starts_with("//") {
            self.completions = None;
            return;
        }
        let completions = complete(catalogue, text, self.input.cursor());
        if completions.is_empty() {
            self.completions = None;
        } else {
            if self.completion >= completions.candidates.len() {
                self.completion = 0;
            }
            self.completions = Some(completions);
        }
    }
}
