//! `adapter="codex"`: the real Codex CLI against a fake OpenAI Responses API on 127.0.0.1.
