//! How the chat draws its conversation: pure functions from the transcript's entries to
//! ratatui lines of a given width, in a [`Theme`]. [`markdown`] lays out the agent's
//! replies, [`highlight`] colours their code blocks, [`diff`] shows a file edit as its
//! diff, and [`entry`] draws each kind of entry (a tool call on one line, its diff under
//! it). Nothing here does IO or reads the environment.

mod code;
pub(crate) mod diff;
pub(crate) mod entry;
pub(crate) mod highlight;
mod langs;
pub(crate) mod markdown;
mod patch;
mod summary;
mod table;
pub(crate) mod theme;
pub(crate) mod wrap;

pub(crate) use entry::entry_lines;
pub(crate) use summary::call_summary;
pub(crate) use theme::Theme;

#[cfg(test)]
pub(crate) mod testing;
