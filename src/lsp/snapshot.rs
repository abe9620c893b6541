//! One version of one buffer, parsed and indexed: what hover, definition, references,
//! completion, symbols, rename and code actions read. Cheap to build (a parse and a walk),
//! so every request sees the text as it is now, not as it was at the last check.

use std::path::{Path, PathBuf};

use tower_lsp_server::ls_types::{Position, Range};

use super::convert;
use super::discovered::Discovered;
use super::index::Index;
use crate::source::{SourceFile, SourceId, Sources, Span};
use crate::syntax::kdl::{self, KdlParse};

/// A parsed and indexed buffer.
#[derive(Debug)]
pub struct Snapshot {
    /// The file's path.
    pub path: PathBuf,
    /// The buffer's version (0 for files read from disk).
    pub version: i32,
    /// Holds this one file, as [`Snapshot::FILE`].
    pub sources: Sources,
    /// The KDL tree (partial after syntax errors), comments and syntax errors.
    pub parse: KdlParse,
    /// The names declared and used.
    pub index: Index,
    /// What the file can use from outside it (custom tools, agents, skills, commands);
    /// empty unless the server looked ([`Snapshot::with_discovered`]).
    pub discovered: Discovered,
}

impl Snapshot {
    /// The id of the file in [`Snapshot::sources`]; also its id in an
    /// [`Analysis`](super::analysis::Analysis) of the same text.
    pub const FILE: SourceId = SourceId(0);

    /// Parses and indexes `text`.
    #[must_use]
    pub fn new(path: &Path, text: &str, version: i32) -> Self {
        let mut sources = Sources::new();
        let file = sources.add(path, text);
        debug_assert_eq!(file, Self::FILE);
        let parse = kdl::parse(text, file);
        let index = Index::build(&sources, &parse.document);
        Self {
            path: path.to_path_buf(),
            version,
            sources,
            parse,
            index,
            discovered: Discovered::default(),
        }
    }

    /// The snapshot, completing `use=` from `discovered` too.
    #[must_use]
    pub fn with_discovered(mut self, discovered: Discovered) -> Self {
        self.discovered = discovered;
        self
    }

    /// The file.
    #[must_use]
    pub fn file(&self) -> &SourceFile {
        self.sources.get(Self::FILE)
    }

    /// The text.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.file().text
    }

    /// The byte offset of a protocol position.
    #[must_use]
    pub fn offset(&self, position: Position) -> usize {
        convert::offset(self.file(), position)
    }

    /// The protocol range of a span in this file.
    #[must_use]
    pub fn range(&self, span: Span) -> Range {
        convert::range(self.file(), span)
    }

    /// A span of this file.
    #[must_use]
    pub fn span(&self, start: usize, end: usize) -> Span {
        Span::new(Self::FILE, start, end)
    }

    /// The directory relative paths in the file are resolved against.
    #[must_use]
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new(""))
    }
}
