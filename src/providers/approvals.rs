//! `permission="ask"`: what a person decided about an agent's permission requests, as data
//! the runtime gives the call (so it crosses to another engine's worker unchanged), and the
//! one rule every adapter applies to a request. A request nobody has decided pauses the
//! call: the adapter stops its backend and reports [`ProviderError::AwaitingPermission`],
//! the run pauses like a `wait`, and the person's answer comes back with the call that
//! continues the session.
//!
//! [`ProviderError::AwaitingPermission`]: super::ProviderError::AwaitingPermission

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::REDACTED;

/// A tool an agent asked to use, as its backend described the request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PermissionAsk {
    /// The tool (`Bash`, `Edit`, OpenCode's `bash`, Copilot's `shell`, …).
    pub tool: String,
    /// What it would be used with (the tool call's input, or the backend's description).
    pub input: Value,
}

impl PermissionAsk {
    /// `Bash {"command":"ls"}`: the request as a person reads it.
    #[must_use]
    pub fn describe(&self) -> String {
        match &self.input {
            Value::Null => format!("`{}`", self.tool),
            Value::Object(map) if map.is_empty() => format!("`{}`", self.tool),
            input => format!("`{}` with {input}", self.tool),
        }
    }
}

/// The tool through which Claude Code's agent asks the person questions. Under
/// `--permission-prompt-tool stdio` it arrives as a permission request like any tool's, its
/// input `{questions: [{question, header, options: [{label, description}], multiSelect}]}`,
/// and is answered by allowing it with the answers added to its input:
/// `answers: {<question>: <label, or labels joined by ", ">}`.
pub const ASK_USER_QUESTION: &str = "AskUserQuestion";

/// One question an agent asks the person (see [`PermissionAsk::questions`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AskedQuestion {
    /// A short label shown above it.
    pub header: Option<String>,
    /// The question.
    pub question: String,
    /// The options: a label, and what it means.
    pub options: Vec<(String, Option<String>)>,
    /// Whether several options may be chosen.
    pub multi: bool,
}

impl PermissionAsk {
    /// The questions, when this request is the agent asking the person
    /// ([`ASK_USER_QUESTION`]) and its input reads as questions.
    #[must_use]
    pub fn questions(&self) -> Option<Vec<AskedQuestion>> {
        if self.tool != ASK_USER_QUESTION {
            return None;
        }
        let text = |value: &Value, field: &str| {
            value
                .get(field)
                .and_then(Value::as_str)
                .filter(|text| !text.is_empty())
                .map(str::to_owned)
        };
        let questions = self.input.get("questions")?.as_array()?;
        let asked: Vec<AskedQuestion> = questions
            .iter()
            .filter_map(|item| {
                let options = item
                    .get("options")
                    .and_then(Value::as_array)
                    .map(|options| {
                        options
                            .iter()
                            .filter_map(|option| {
                                Some((text(option, "label")?, text(option, "description")))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                Some(AskedQuestion {
                    header: text(item, "header"),
                    question: text(item, "question")?,
                    options,
                    multi: item
                        .get("multiSelect")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                })
            })
            .collect();
        (!asked.is_empty()).then_some(asked)
    }

    /// This question request with the person's answers (one per question, in order; a
    /// multiple choice's labels joined by `, `) added to its input, as Claude Code reads
    /// them back.
    #[must_use]
    pub fn answered_with(&self, answers: &[String]) -> Self {
        let questions = self.questions().unwrap_or_default();
        let answers: serde_json::Map<String, Value> = questions
            .iter()
            .zip(answers)
            .map(|(asked, answer)| (asked.question.clone(), Value::String(answer.clone())))
            .collect();
        let mut input = self.input.clone();
        if let Value::Object(fields) = &mut input {
            fields.insert("answers".to_owned(), Value::Object(answers));
        }
        Self {
            tool: self.tool.clone(),
            input,
        }
    }

    /// Whether `answered` (an [`answered_with`](Self::answered_with) copy) answers this
    /// same question request: the same questions, whatever the answers.
    #[must_use]
    pub fn is_answered_by(&self, answered: &Self) -> bool {
        self.tool == ASK_USER_QUESTION
            && answered.tool == ASK_USER_QUESTION
            && answered.input.get("answers").is_some()
            && self.input.get("questions") == answered.input.get("questions")
    }
}

/// A person's answer to one [`PermissionAsk`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PermissionAnswer {
    /// Allow this request once.
    Allow,
    /// Allow the tool for the rest of the run.
    AllowRun,
    /// Refuse it.
    Deny,
}

impl PermissionAnswer {
    /// Every answer, as `atomic resume --answer` spells it, with what it means.
    pub const CHOICES: [(Self, &'static str); 3] = [
        (Self::Allow, "allow this request once"),
        (Self::AllowRun, "allow this tool for the rest of the run"),
        (
            Self::Deny,
            "refuse it; the agent is told and goes on without it",
        ),
    ];

    /// The spelling of `--answer`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::AllowRun => "allow-run",
            Self::Deny => "deny",
        }
    }

    /// Reads an answer (`allow`, `allow-run`, `deny`; also `yes`/`no`, `y`/`n`).
    ///
    /// # Errors
    /// A message listing the answers.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "allow" | "allow-once" | "yes" | "y" => Ok(Self::Allow),
            "allow-run" | "always" => Ok(Self::AllowRun),
            "deny" | "no" | "n" => Ok(Self::Deny),
            other => Err(format!(
                "`{other}` is not an answer to a permission request; answer `allow` (this once), `allow-run` (this tool for the rest of the run) or `deny`"
            )),
        }
    }

    /// Whether the request may go ahead.
    #[must_use]
    pub fn allows(self) -> bool {
        !matches!(self, Self::Deny)
    }
}

/// One request a person answered, carried to the call that continues its session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Answered {
    /// The request.
    pub ask: PermissionAsk,
    /// The answer.
    pub answer: PermissionAnswer,
}

/// What the call may answer by itself (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Approvals {
    /// Tools a person allowed for the rest of the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// The request a person just answered, if this call continues one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered: Option<Answered>,
}

/// What an adapter does with a request under `permission="ask"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Let it run.
    Allow,
    /// Refuse it, telling the agent this.
    Deny(String),
    /// Nobody has decided: stop the call and ask.
    Ask,
}

impl Approvals {
    /// The verdict on `ask`: a tool allowed for the run, or the answered request (used up
    /// by the first request it matches: "once"); anything else is asked.
    pub fn decide(&mut self, ask: &PermissionAsk) -> Verdict {
        if self.tools.contains(&ask.tool) {
            return Verdict::Allow;
        }
        let answers = |answered: &mut Answered| {
            answered.ask.tool == ask.tool && same_input(&answered.ask.input, &ask.input)
        };
        if let Some(answered) = self.answered.take_if(answers) {
            return if answered.answer.allows() {
                Verdict::Allow
            } else {
                Verdict::Deny(format!(
                    "The person running this workflow refused {}; do not try it again, go on without it.",
                    ask.describe()
                ))
            };
        }
        Verdict::Ask
    }
}

/// Whether `actual` is the input a person answered about, `answered` as the run kept it:
/// with each secret replaced by [`REDACTED`], which stands for any text there.
fn same_input(answered: &Value, actual: &Value) -> bool {
    match (answered, actual) {
        (Value::String(kept), Value::String(text)) => matches_redacted(kept, text),
        (Value::Array(kept), Value::Array(items)) => {
            kept.len() == items.len() && kept.iter().zip(items).all(|(k, i)| same_input(k, i))
        }
        (Value::Object(kept), Value::Object(fields)) => {
            kept.len() == fields.len()
                && kept
                    .iter()
                    .all(|(name, k)| fields.get(name).is_some_and(|i| same_input(k, i)))
        }
        _ => answered == actual,
    }
}

/// `text` read against `kept`, where each [`REDACTED`] in `kept` matches any text.
fn matches_redacted(kept: &str, text: &str) -> bool {
    let mut pieces = kept.split(REDACTED);
    let first = pieces.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let pieces: Vec<&str> = pieces.collect();
    let Some((last, middle)) = pieces.split_last() else {
        return rest.is_empty();
    };
    for piece in middle {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ask(tool: &str, command: &str) -> PermissionAsk {
        PermissionAsk {
            tool: tool.to_owned(),
            input: json!({"command": command}),
        }
    }

    #[test]
    fn an_answer_is_used_once_and_only_for_its_request() {
        let mut approvals = Approvals {
            tools: Vec::new(),
            answered: Some(Answered {
                ask: ask("Bash", "ls"),
                answer: PermissionAnswer::Allow,
            }),
        };
        assert_eq!(approvals.decide(&ask("Bash", "rm -rf /")), Verdict::Ask);
        assert_eq!(approvals.decide(&ask("Bash", "ls")), Verdict::Allow);
        assert_eq!(approvals.decide(&ask("Bash", "ls")), Verdict::Ask, "once");
    }

    #[test]
    fn a_refusal_tells_the_agent_and_a_run_grant_covers_the_tool() {
        let mut approvals = Approvals {
            tools: vec!["Edit".to_owned()],
            answered: Some(Answered {
                ask: ask("Bash", "ls"),
                answer: PermissionAnswer::Deny,
            }),
        };
        let Verdict::Deny(message) = approvals.decide(&ask("Bash", "ls")) else {
            panic!("denied");
        };
        assert!(
            message.contains("`Bash` with {\"command\":\"ls\"}"),
            "{message}"
        );
        assert_eq!(approvals.decide(&ask("Edit", "x")), Verdict::Allow);
        assert_eq!(approvals.decide(&ask("Edit", "y")), Verdict::Allow);
    }

    #[test]
    fn a_kept_input_with_a_secret_redacted_still_answers_its_request() {
        let kept = json!({"command": "curl -H 'key: [REDACTED]' http://127.0.0.1/x"});
        let actual = json!({"command": "curl -H 'key: sk-123' http://127.0.0.1/x"});
        assert!(same_input(&kept, &actual));
        assert!(!same_input(
            &kept,
            &json!({"command": "curl -H 'key: sk-123' http://127.0.0.1/y"})
        ));
        assert!(!same_input(&kept, &json!({"command": "rm -rf /"})));
        assert!(!same_input(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(matches_redacted("[REDACTED]", "anything"));
        assert!(matches_redacted("a[REDACTED]b[REDACTED]c", "a1b2c"));
        assert!(!matches_redacted("a[REDACTED]b[REDACTED]c", "a1c"));
        assert!(matches_redacted("plain", "plain"));
        assert!(!matches_redacted("plain", "plainer"));
    }

    #[test]
    fn answers_parse_in_every_spelling_and_refuse_others() {
        for (text, answer) in [
            ("allow", PermissionAnswer::Allow),
            ("Y", PermissionAnswer::Allow),
            ("allow-run", PermissionAnswer::AllowRun),
            (" deny ", PermissionAnswer::Deny),
            ("no", PermissionAnswer::Deny),
        ] {
            assert_eq!(PermissionAnswer::parse(text), Ok(answer), "{text}");
        }
        let error = PermissionAnswer::parse("maybe").unwrap_err();
        assert!(error.contains("`allow-run`"), "{error}");
        for (answer, _) in PermissionAnswer::CHOICES {
            assert_eq!(PermissionAnswer::parse(answer.name()), Ok(answer));
        }
    }
}
