//! `permission="ask"` through `atomic run`: the in-process model and the real Claude Code.
