//! A plain step's events, stored implicitly.
//!
//! Most steps log exactly two events: `step-started` (its number, node, kind and attempt)
//! and `step-finished` (its number, node, status and delta), every part of which is in the
//! step's row already except the node's kind. Such a step's `events` column holds only the
//! kind, as a JSON string (`"set"`), and reading the row rebuilds the events' text from
//! the row's columns. A step's events are stored this way only when the rebuilt text is
//! the text they serialised to, byte for byte, so what is read back never differs from
//! what was committed; any other step (more events, a branch, outputs, a delta that
//! serialises otherwise) keeps its events whole.

use std::borrow::Cow;
use std::fmt::Write as _;

/// The row's columns the events are rebuilt from.
pub(super) struct StepColumns<'a> {
    pub(super) seq: u64,
    pub(super) node_id: &'a str,
    pub(super) status: &'a str,
    pub(super) attempts: u64,
    /// The `delta` column's JSON text.
    pub(super) delta: &'a str,
}

/// What to store in the `events` column for `events` (the events' JSON text): the kind
/// alone when the events are a plain step's, else the events as they are.
pub(super) fn stored<'a>(step: &StepColumns<'_>, events: &'a str) -> Cow<'a, str> {
    match plain_kind(step, events) {
        Some(kind) => Cow::Owned(format!("\"{kind}\"")),
        None => Cow::Borrowed(events),
    }
}

/// The events' JSON text from the `events` column of a row with `step`'s columns.
pub(super) fn events<'a>(step: &StepColumns<'_>, column: &'a str) -> Cow<'a, str> {
    match column
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
    {
        Some(kind) if is_kind(kind) => Cow::Owned(plain_events(step, kind)),
        _ => Cow::Borrowed(column),
    }
}

/// The kind of the plain step whose events serialised to `events`, if they are a plain
/// step's.
fn plain_kind<'a>(step: &StepColumns<'_>, events: &'a str) -> Option<&'a str> {
    // `[{"type":"step-started","step":N,"node":"…","kind":"KIND",…`
    let rest = events.strip_prefix(r#"[{"type":"step-started","step":"#)?;
    let (_, rest) = rest.split_once(r#","kind":""#)?;
    let kind = &rest[..rest.find('"')?];
    (is_kind(kind) && plain_events(step, kind) == events).then_some(kind)
}

/// A node kind as the events write it (`set`, `task-loop`): nothing to escape.
fn is_kind(kind: &str) -> bool {
    !kind.is_empty()
        && kind
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-')
}

/// The text a plain step's two events serialise to.
fn plain_events(step: &StepColumns<'_>, kind: &str) -> String {
    let node = serde_json::to_string(step.node_id).expect("a string serialises");
    let mut text = String::with_capacity(150 + 2 * node.len() + step.delta.len());
    let StepColumns {
        seq,
        status,
        attempts,
        delta,
        ..
    } = step;
    let _ = write!(
        text,
        r#"[{{"type":"step-started","step":{seq},"node":{node},"kind":"{kind}","attempt":{attempts}}},{{"type":"step-finished","step":{seq},"node":{node},"status":"{status}","delta":{{"fields":{delta}}}}}]"#
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(delta: &str) -> StepColumns<'_> {
        StepColumns {
            seq: 5,
            node_id: "inc \"one\"",
            status: "completed",
            attempts: 1,
            delta,
        }
    }

    const PLAIN: &str = r#"[{"type":"step-started","step":5,"node":"inc \"one\"","kind":"task-loop","attempt":1},{"type":"step-finished","step":5,"node":"inc \"one\"","status":"completed","delta":{"fields":{"n":{"set":5}}}}]"#;

    #[test]
    fn a_plain_steps_events_are_stored_as_its_kind_and_read_back_whole() {
        let step = columns(r#"{"n":{"set":5}}"#);
        let stored = stored(&step, PLAIN);
        assert_eq!(stored, r#""task-loop""#);
        assert_eq!(events(&step, &stored), PLAIN);
    }

    #[test]
    fn events_that_differ_in_anything_are_stored_whole() {
        let step = columns(r#"{"n":{"set":5}}"#);
        let others = [
            // Another delta in the event than in the row.
            PLAIN.replace(r#"{"set":5}}}}]"#, r#"{"set":6}}}}]"#),
            // A branch, a third event, another attempt, another step number, another node.
            PLAIN.replace(r#""attempt":1}"#, r#""attempt":1,"branch":0}"#),
            PLAIN.replace("}}}]", r#"}}},{"type":"node-finished"}]"#),
            PLAIN.replace(r#""attempt":1"#, r#""attempt":2"#),
            PLAIN.replace(
                r#""step":5,"node":"inc \"one\"","status""#,
                r#""step":6,"node":"inc \"one\"","status""#,
            ),
            PLAIN.replace(r#""node":"inc \"one\"","kind""#, r#""node":"inc","kind""#),
            // A kind that would need escaping.
            PLAIN.replace("task-loop", "Task"),
            "[]".to_owned(),
            String::new(),
        ];
        for events in others {
            assert_eq!(stored(&step, &events), events.as_str(), "{events}");
        }
    }

    #[test]
    fn a_column_holding_whole_events_reads_as_it_is() {
        let step = columns(r#"{"n":{"set":5}}"#);
        assert_eq!(events(&step, PLAIN), PLAIN);
        assert_eq!(events(&step, "[]"), "[]");
        // A JSON string that is not a kind is left for the decoder to refuse.
        assert_eq!(events(&step, r#""a b""#), r#""a b""#);
    }
}
