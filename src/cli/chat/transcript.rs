//! What the chat shows and saves: the conversation as entries (a person's message, the
//! agent's reply with its thinking, each tool call, a permission asked, a question, the
//! agent's plan, a workflow run, a notice), what is pending a person's answer, and the
//! status line. The agent's events are folded in by [`Transcript::apply`], the same for
//! every adapter; the conversation owns the transcript and the view draws it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::providers::{AgentEvent, PermissionAnswer, PermissionAsk, Todo, Usage};

/// The conversation so far, and what the chat is doing now.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Transcript {
    /// Every entry, oldest first.
    pub(crate) entries: Vec<Entry>,
    /// What waits for the person's answer before the agent can go on.
    #[serde(skip)]
    pub(crate) pending: Option<Pending>,
    /// Whether the agent is working on a turn now (Esc interrupts it).
    #[serde(skip)]
    pub(crate) busy: bool,
    /// The status line.
    pub(crate) status: Status,
}

/// One thing in the conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub(crate) enum Entry {
    /// What the person sent.
    User {
        /// The text as typed (a slash command as written).
        text: String,
        /// What the agent was told, when it differs from `text` (a slash command
        /// expanded); kept so the conversation can be told again to a backend that keeps
        /// no session.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        told: Option<String>,
    },
    /// The agent's reply: markdown, streamed in.
    Assistant {
        /// The reply so far.
        text: String,
        /// Its visible thinking (shown folded).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        thinking: String,
        /// Whether the reply is whole (its message completed).
        done: bool,
    },
    /// One tool call, with its input and, once it finished, its result.
    Tool {
        /// The backend's tool-call id.
        id: String,
        /// The tool.
        name: String,
        /// Its input (an edit's `old_string`/`new_string`, a command…).
        input: Value,
        /// A short summary of the result, once it finished.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<String>,
        /// Whether it failed.
        #[serde(default)]
        is_error: bool,
    },
    /// A permission the agent asked for, and what the person (or the session's grants)
    /// answered.
    Permission {
        /// What was asked.
        ask: PermissionAsk,
        /// The answer; `None` while it is asked.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answer: Option<PermissionAnswer>,
    },
    /// A question the agent asked the person, and the answers.
    Question {
        /// What was asked.
        question: Question,
        /// One answer per item (the chosen labels, or typed text); empty while asked.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        answers: Vec<String>,
    },
    /// The agent's plan, as it last reported it.
    Plan {
        /// Every item.
        todos: Vec<Todo>,
    },
    /// A workflow started from the chat.
    Run {
        /// The run's id.
        run_id: String,
        /// The workflow's name.
        workflow: String,
        /// Its status as last seen (`running`, `waiting`, `completed`, `failed`, …).
        status: String,
        /// What it ended with (its outputs, or its error), once it ended.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<String>,
    },
    /// Something the chat says itself (an error, `/help`, a model switched).
    Notice {
        /// The text.
        text: String,
        /// Whether it is an error.
        #[serde(default)]
        error: bool,
    },
}

/// What waits for the person before the conversation can go on.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Pending {
    /// The agent asked to use a tool the session's grants do not cover: allow once,
    /// allow for the session, or deny.
    Permission(PermissionAsk),
    /// The agent asked the person a question.
    Question(Question),
}

/// A question from the agent (Claude Code's `AskUserQuestion`, an ACP elicitation), or a
/// workflow's `wait`, asked the same way: one or more items, each with options.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Question {
    /// The items, asked in order.
    pub(crate) items: Vec<QuestionItem>,
}

/// One item of a [`Question`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct QuestionItem {
    /// A short label shown above it (`header=` of a wait, AskUserQuestion's `header`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) header: Option<String>,
    /// The question.
    pub(crate) text: String,
    /// The options; none: the answer is typed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) options: Vec<QuestionOption>,
    /// Whether several options may be chosen.
    #[serde(default)]
    pub(crate) multi: bool,
}

/// One option of a [`QuestionItem`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct QuestionOption {
    /// What is answered when it is chosen.
    pub(crate) label: String,
    /// What it means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
}

/// A wait of a workflow run started from the chat.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RunWait {
    /// The run.
    pub(crate) run_id: String,
    /// The wait (as `atomic resume --wait` names it).
    pub(crate) wait: String,
    /// Asked as a question.
    pub(crate) question: Question,
}

/// The status line: who the chat talks to, what it cost, how full the context is.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Status {
    /// The adapter.
    pub(crate) adapter: String,
    /// The model, as asked for or as the backend reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<String>,
    /// Tokens over the whole conversation.
    pub(crate) usage: Usage,
    /// Cost in USD over the whole conversation, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cost_usd: Option<f64>,
    /// How full the context window is (0..=1), where the backend says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) context: Option<f64>,
}

impl Transcript {
    /// Adds an entry.
    pub(crate) fn push(&mut self, entry: Entry) {
        self.entries.push(entry);
    }

    /// Adds a notice.
    pub(crate) fn notice(&mut self, text: impl Into<String>, error: bool) {
        self.push(Entry::Notice {
            text: text.into(),
            error,
        });
    }

    /// Folds one event of the agent's turn in. `turn_usage` is the usage of the turns
    /// before this one: an event's usage is cumulative for its call.
    pub(crate) fn apply(&mut self, event: &AgentEvent, before: &Status) {
        match event {
            AgentEvent::SessionStart { model, .. } => {
                if let Some(model) = model {
                    self.status.model = Some(model.clone());
                }
            }
            AgentEvent::TextDelta { text } => self.reply().0.push_str(text),
            AgentEvent::ThinkingDelta { text } => self.reply().1.push_str(text),
            AgentEvent::MessageComplete { text } => {
                let (reply, _, done) = self.reply();
                // The whole message is the truth: a backend that streamed nothing (or
                // only part) still shows all of it.
                if reply.len() < text.len() || !text.starts_with(reply.as_str()) {
                    text.clone_into(reply);
                }
                *done = true;
            }
            AgentEvent::ToolStart { id, name, input } => self.push(Entry::Tool {
                id: id.clone(),
                name: name.clone(),
                input: input.clone(),
                result: None,
                is_error: false,
            }),
            AgentEvent::ToolComplete {
                id,
                name,
                summary,
                is_error,
            } => {
                let open = self.entries.iter_mut().rev().find_map(|entry| match entry {
                    Entry::Tool {
                        id: open_id,
                        result,
                        is_error,
                        ..
                    } if open_id == id && result.is_none() => Some((result, is_error)),
                    _ => None,
                });
                match open {
                    Some((result, error)) => {
                        *result = Some(summary.clone());
                        *error = *is_error;
                    }
                    None => self.push(Entry::Tool {
                        id: id.clone(),
                        name: name.clone(),
                        input: Value::Null,
                        result: Some(summary.clone()),
                        is_error: *is_error,
                    }),
                }
            }
            AgentEvent::PermissionRequest { tool, granted } => self.push(Entry::Permission {
                ask: PermissionAsk {
                    tool: tool.clone(),
                    input: Value::Null,
                },
                answer: Some(if *granted {
                    PermissionAnswer::AllowRun
                } else {
                    PermissionAnswer::Deny
                }),
            }),
            AgentEvent::Plan { todos } => {
                // One plan entry per stretch of the conversation: an update replaces the
                // plan shown since the person last spoke.
                let latest = self.entries.iter_mut().rev().find_map(|entry| match entry {
                    Entry::Plan { todos } => Some(Some(todos)),
                    Entry::User { .. } => Some(None),
                    _ => None,
                });
                match latest.flatten() {
                    Some(shown) => shown.clone_from(todos),
                    None => self.push(Entry::Plan {
                        todos: todos.clone(),
                    }),
                }
            }
            AgentEvent::Usage { usage, cost_usd } => {
                let mut total = before.usage;
                total.add(*usage);
                self.status.usage = total;
                self.status.cost_usd = match (before.cost_usd, cost_usd) {
                    (Some(a), Some(b)) => Some(a + b),
                    (a, b) => a.or(*b),
                };
            }
            AgentEvent::ContextWindow { fraction } => self.status.context = Some(*fraction),
            AgentEvent::SubagentStart { name } => {
                self.notice(format!("sub-agent {name} started"), false)
            }
            AgentEvent::SubagentEnd { name } => {
                self.notice(format!("sub-agent {name} ended"), false)
            }
            AgentEvent::SessionEnd { .. } => {}
        }
    }

    /// The reply being streamed: the last entry when it is an unfinished reply, else a
    /// new one (text after a tool call starts a new reply).
    fn reply(&mut self) -> (&mut String, &mut String, &mut bool) {
        if !matches!(
            self.entries.last(),
            Some(Entry::Assistant { done: false, .. })
        ) {
            self.push(Entry::Assistant {
                text: String::new(),
                thinking: String::new(),
                done: false,
            });
        }
        match self.entries.last_mut() {
            Some(Entry::Assistant {
                text,
                thinking,
                done,
            }) => (text, thinking, done),
            _ => unreachable!("an unfinished reply was just ensured"),
        }
    }

    /// Marks the reply being streamed finished (the turn ended, or was interrupted).
    pub(crate) fn finish_reply(&mut self) {
        if let Some(Entry::Assistant { done, .. }) = self.entries.last_mut() {
            *done = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::providers::TodoStatus;

    fn folded(events: &[AgentEvent]) -> Transcript {
        let mut transcript = Transcript::default();
        let before = Status::default();
        for event in events {
            transcript.apply(event, &before);
        }
        transcript
    }

    #[test]
    fn deltas_build_one_reply_and_a_tool_call_starts_the_next() {
        let transcript = folded(&[
            AgentEvent::TextDelta {
                text: "Let me ".into(),
            },
            AgentEvent::TextDelta {
                text: "look.".into(),
            },
            AgentEvent::MessageComplete {
                text: "Let me look.".into(),
            },
            AgentEvent::ToolStart {
                id: "t1".into(),
                name: "Read".into(),
                input: json!({"file_path": "a.rs"}),
            },
            AgentEvent::ToolComplete {
                id: "t1".into(),
                name: "Read".into(),
                summary: "12 lines".into(),
                is_error: false,
            },
            AgentEvent::TextDelta {
                text: "Done".into(),
            },
        ]);
        assert_eq!(transcript.entries.len(), 3, "{:#?}", transcript.entries);
        assert!(
            matches!(&transcript.entries[0], Entry::Assistant { text, done: true, .. } if text == "Let me look.")
        );
        assert!(
            matches!(&transcript.entries[1], Entry::Tool { result: Some(r), .. } if r == "12 lines")
        );
        assert!(
            matches!(&transcript.entries[2], Entry::Assistant { text, done: false, .. } if text == "Done")
        );
    }

    #[test]
    fn a_message_that_was_not_streamed_is_shown_whole() {
        let transcript = folded(&[AgentEvent::MessageComplete {
            text: "all at once".into(),
        }]);
        assert!(
            matches!(&transcript.entries[0], Entry::Assistant { text, done: true, .. } if text == "all at once")
        );
    }

    #[test]
    fn a_plan_update_replaces_the_plan_of_the_same_turn_only() {
        let todo = |content: &str, status| Todo {
            content: content.into(),
            status,
            active_form: None,
        };
        let mut transcript = folded(&[
            AgentEvent::Plan {
                todos: vec![todo("a", TodoStatus::Pending)],
            },
            AgentEvent::Plan {
                todos: vec![todo("a", TodoStatus::Completed)],
            },
        ]);
        assert_eq!(transcript.entries.len(), 1);
        transcript.push(Entry::User {
            text: "next".into(),
            told: None,
        });
        transcript.apply(
            &AgentEvent::Plan {
                todos: vec![todo("b", TodoStatus::InProgress)],
            },
            &Status::default(),
        );
        assert_eq!(transcript.entries.len(), 3);
    }

    #[test]
    fn usage_adds_to_the_turns_before() {
        let before = Status {
            usage: Usage {
                input_tokens: 10,
                output_tokens: 5,
                ..Usage::default()
            },
            cost_usd: Some(0.5),
            ..Status::default()
        };
        let mut transcript = Transcript::default();
        transcript.apply(
            &AgentEvent::Usage {
                usage: Usage {
                    input_tokens: 1,
                    output_tokens: 2,
                    ..Usage::default()
                },
                cost_usd: Some(0.25),
            },
            &before,
        );
        assert_eq!(transcript.status.usage.input_tokens, 11);
        assert_eq!(transcript.status.usage.output_tokens, 7);
        assert_eq!(transcript.status.cost_usd, Some(0.75));
    }
}
