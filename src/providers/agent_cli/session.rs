//! Sessions: the id atomic chooses for a CLI that takes one (`--session-id`), and how a
//! successful call ends.

use crate::providers::{AgentEvent, AgentReply, AgentRequest, EventSink};

/// The session a call runs in: the one it continues, or a new id.
pub(crate) fn session_for(request: &AgentRequest) -> String {
    request
        .session
        .resume
        .clone()
        .unwrap_or_else(new_session_id)
}

/// Ends a successful call as the adapter contract says: the call's `usage` (its total),
/// then `session-end` naming the reply's session, and the reply.
pub(crate) fn end_call(events: &dyn EventSink, reply: AgentReply) -> AgentReply {
    events.emit(AgentEvent::Usage {
        usage: reply.usage,
        cost_usd: reply.cost_usd,
    });
    events.emit(AgentEvent::SessionEnd {
        session_id: reply.session_id.clone(),
    });
    reply
}

/// A random version 4 UUID, the form the CLIs' `--session-id` takes.
pub(crate) fn new_session_id() -> String {
    let mut bytes: [u8; 16] = rand::random();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_random_version_4_uuids() {
        let id = new_session_id();
        assert_eq!(id.len(), 36);
        assert_eq!(id.as_bytes()[14], b'4');
        assert!(
            matches!(id.as_bytes()[19], b'8' | b'9' | b'a' | b'b'),
            "{id}"
        );
        assert_ne!(id, new_session_id());
    }
}
