//! `adapter="gemini"`: the real Gemini CLI against a fake Gemini API on 127.0.0.1.
