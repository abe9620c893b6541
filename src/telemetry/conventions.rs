//! The names spans and attributes are exported under: the OpenTelemetry GenAI semantic
//! conventions where they say something, `atomic.*` where they do not.

use opentelemetry::trace::TraceId;

/// `gen_ai.operation.name`.
pub(crate) const OPERATION: &str = "gen_ai.operation.name";
/// `gen_ai.provider.name`: who serves the model.
pub(crate) const PROVIDER_NAME: &str = "gen_ai.provider.name";
/// `gen_ai.system`: the older name of `gen_ai.provider.name`, kept for older backends.
pub(crate) const SYSTEM: &str = "gen_ai.system";
/// `gen_ai.agent.name`: the agent node's id.
pub(crate) const AGENT_NAME: &str = "gen_ai.agent.name";
/// `gen_ai.request.model`: the model the node asked for.
pub(crate) const REQUEST_MODEL: &str = "gen_ai.request.model";
/// `gen_ai.response.model`: the model that answered.
pub(crate) const RESPONSE_MODEL: &str = "gen_ai.response.model";
/// `gen_ai.conversation.id`: the backend's session.
pub(crate) const CONVERSATION_ID: &str = "gen_ai.conversation.id";
/// `gen_ai.usage.input_tokens`.
pub(crate) const INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
/// `gen_ai.usage.output_tokens`.
pub(crate) const OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
/// `gen_ai.tool.name`.
pub(crate) const TOOL_NAME: &str = "gen_ai.tool.name";
/// `gen_ai.tool.call.id`.
pub(crate) const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
/// `gen_ai.tool.type`.
pub(crate) const TOOL_TYPE: &str = "gen_ai.tool.type";
/// `gen_ai.tool.call.arguments` (content: only with capture).
pub(crate) const TOOL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
/// `gen_ai.tool.call.result` (content: only with capture).
pub(crate) const TOOL_RESULT: &str = "gen_ai.tool.call.result";
/// `gen_ai.input.messages` (content: only with capture).
pub(crate) const INPUT_MESSAGES: &str = "gen_ai.input.messages";
/// `gen_ai.output.messages` (content: only with capture).
pub(crate) const OUTPUT_MESSAGES: &str = "gen_ai.output.messages";
/// `gen_ai.system_instructions` (content: only with capture).
pub(crate) const SYSTEM_INSTRUCTIONS: &str = "gen_ai.system_instructions";
/// `error.type`: the failure's class.
pub(crate) const ERROR_TYPE: &str = "error.type";

/// Cost of a call or a run in USD, where known.
pub(crate) const COST_USD: &str = "atomic.cost_usd";
/// Prompt tokens read from cache.
pub(crate) const CACHE_READ_TOKENS: &str = "atomic.usage.cache_read_tokens";
/// Prompt tokens written to cache.
pub(crate) const CACHE_WRITE_TOKENS: &str = "atomic.usage.cache_write_tokens";
/// The run id (`atomic show RUN`).
pub(crate) const RUN_ID: &str = "atomic.run.id";
/// The workflow's name.
pub(crate) const WORKFLOW: &str = "atomic.workflow";
/// Whether this stretch of the run continues an earlier one.
pub(crate) const RESUMED: &str = "atomic.run.resumed";
/// How the run's stretch ended: `completed`, `failed`, `paused`, `cancelled`.
pub(crate) const RUN_STATUS: &str = "atomic.run.status";
/// Steps committed.
pub(crate) const STEPS: &str = "atomic.run.steps";
/// A node's id.
pub(crate) const NODE: &str = "atomic.node.id";
/// A node's kind.
pub(crate) const KIND: &str = "atomic.node.kind";
/// The step number.
pub(crate) const STEP: &str = "atomic.step";
/// The attempt, from 1.
pub(crate) const ATTEMPT: &str = "atomic.attempt";
/// The parallel branch.
pub(crate) const BRANCH: &str = "atomic.branch";
/// How a step ended: `completed`, `skipped`, `recovered`.
pub(crate) const STEP_STATUS: &str = "atomic.step.status";
/// What a node's failure led to: `skip`, `recover`, `fail-branch`, `fail-run`.
pub(crate) const FAIL_ACTION: &str = "atomic.fail.action";
/// The provider declaration's adapter.
pub(crate) const ADAPTER: &str = "atomic.adapter";
/// The provider declaration's name.
pub(crate) const PROVIDER_DECL: &str = "atomic.provider";
/// Turns an agent call took.
pub(crate) const TURNS: &str = "atomic.turns";

/// `gen_ai.provider.name` for an adapter: who serves its model (the agent CLIs run on their
/// vendor's models unless told otherwise); an adapter of no one vendor is named as itself.
pub(crate) fn provider_name(adapter: &str) -> &str {
    match adapter {
        "anthropic" | "claude-code" => "anthropic",
        "openai" | "codex" => "openai",
        "gemini" => "gcp.gemini",
        other => other,
    }
}

/// The trace id of a run: every stretch of it (`atomic run`, then each `atomic resume`)
/// lands in the same trace. FNV-1a over the run id, 128 bits, stable across versions.
pub(crate) fn trace_id(run_id: &str) -> TraceId {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    let hash = run_id.bytes().fold(OFFSET, |hash, byte| {
        (hash ^ u128::from(byte)).wrapping_mul(PRIME)
    });
    // All zeroes is the invalid id.
    TraceId::from(hash.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_keeps_its_trace() {
        assert_eq!(trace_id("r1"), trace_id("r1"));
        assert_ne!(trace_id("r1"), trace_id("r2"));
        assert_eq!(trace_id("").to_string(), "6c62272e07bb014262b821756295c58d");
    }

    #[test]
    fn vendors_of_the_agent_clis() {
        assert_eq!(provider_name("claude-code"), "anthropic");
        assert_eq!(provider_name("codex"), "openai");
        assert_eq!(provider_name("gemini"), "gcp.gemini");
        assert_eq!(provider_name("opencode"), "opencode");
    }
}
