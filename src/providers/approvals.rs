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
