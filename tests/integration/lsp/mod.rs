//! The language server end to end: in process over an in-memory pipe (the real server and
//! the real message framing, with a small JSON client), and with Neovim as the client.

mod client;
mod diagnostics;
mod nvim;
mod requests;
mod robust;
