//! The transport: `atomic lsp` over stdio with tower-lsp-server. Keeps the open buffers,
//! checks them (debounced, dropping stale versions) and publishes diagnostics, and answers
//! requests by calling the feature functions on a fresh [`Snapshot`] of the buffer.
//!
//! Ordering: notifications change the buffers synchronously, before any `.await`, so a
//! request that follows a change sees it. Checks run on the blocking pool; a check whose
//! version is no longer the buffer's is thrown away unpublished.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tower_lsp_server::jsonrpc::{self, Result};
use tower_lsp_server::ls_types::{
    CodeActionKind, CodeActionOptions, CodeActionParams, CodeActionProviderCapability,
    CodeActionResponse, CompletionOptions, CompletionParams, CompletionResponse,
    DidChangeTextDocumentParams, DidChangeWatchedFilesParams,
    DidChangeWatchedFilesRegistrationOptions, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, DocumentSymbolParams, DocumentSymbolResponse, FileSystemWatcher,
    GlobPattern, GotoDefinitionParams, GotoDefinitionResponse, Hover, HoverParams,
    HoverProviderCapability, InitializeParams, InitializeResult, InitializedParams, Location,
    OneOf, PositionEncodingKind, PrepareRenameResponse, ReferenceParams, Registration,
    RenameOptions, RenameParams, ServerCapabilities, ServerInfo, TextDocumentPositionParams,
    TextDocumentSyncCapability, TextDocumentSyncKind, Uri, WorkspaceEdit,
};
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

use super::analysis::Analysis;
use super::analysis::project_root;
use super::discovered::Discovered;
use super::documents::Documents;
use super::feedback::Feedback;
use super::files::Overlay;
use super::snapshot::Snapshot;
use super::{code_action, completion, convert, definition, hover, references, rename, symbols};
use crate::disk::Disk;

/// How long typing must pause before a changed buffer is checked.
pub const DEBOUNCE: Duration = Duration::from_millis(50);

/// How long the custom tools and definitions found for a file are reused by completion and
/// hover before they are looked up again (a new tool file shows up within this).
const DISCOVERY_FRESH: Duration = Duration::from_secs(2);

/// Serves the language server on stdin/stdout until the client exits. `home` is the user's
/// home directory (for their custom tools and discovered agents, skills and commands).
pub async fn serve_stdio(home: Option<PathBuf>) {
    let (service, socket) = LspService::new(|client| Backend::new(client).with_home(home));
    Server::new(tokio::io::stdin(), tokio::io::stdout(), socket)
        .serve(service)
        .await;
}

#[derive(Debug, Default)]
struct State {
    /// Whether the client lets us register file watchers.
    watch_files: bool,
    documents: Documents,
    analyses: HashMap<PathBuf, Arc<Analysis>>,
    snapshots: HashMap<PathBuf, Arc<Snapshot>>,
    /// What each file can `use` from outside it, and when that was looked up.
    discovered: HashMap<PathBuf, (Instant, Discovered)>,
    feedback: Feedback,
}

/// The language server.
#[derive(Debug, Clone)]
pub struct Backend {
    client: Client,
    state: Arc<Mutex<State>>,
    debounce: Duration,
    home: Option<Arc<Path>>,
}

impl Backend {
    /// A server talking to `client`.
    #[must_use]
    pub fn new(client: Client) -> Self {
        Self {
            client,
            state: Arc::new(Mutex::new(State::default())),
            debounce: DEBOUNCE,
            home: None,
        }
    }

    /// Reads the user's custom tools and definitions under `home` (the CLI passes `$HOME`;
    /// the server itself reads no environment).
    #[must_use]
    pub fn with_home(mut self, home: Option<PathBuf>) -> Self {
        self.home = home.map(Arc::from);
        self
    }

    /// Waits `debounce` after a change before checking (tests use a longer pause so that
    /// "typing" in a test is never slower than the pause).
    #[must_use]
    pub fn with_debounce(mut self, debounce: Duration) -> Self {
        self.debounce = debounce;
        self
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data behind; keep serving.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Checks `path` at `version` after `delay`, unless the buffer has moved on; publishes
    /// its diagnostics, then (if `cascade`) re-checks the open workflows that read it.
    fn schedule(&self, path: PathBuf, version: i32, delay: Duration, cascade: bool) {
        let this = self.clone();
        tokio::spawn(async move {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            this.check(path, version, cascade).await;
        });
    }

    async fn check(&self, path: PathBuf, version: i32, cascade: bool) {
        let (text, buffers) = {
            let state = self.state();
            match state.documents.get(&path) {
                Some(document) if document.version == version => {
                    (document.text.clone(), state.documents.texts())
                }
                _ => return,
            }
        };
        let task_path = path.clone();
        let home = self.home.clone();
        let analysis = tokio::task::spawn_blocking(move || {
            Analysis::new(&task_path, &text, version, &buffers, &Disk, home.as_deref())
        })
        .await;
        let analysis = match analysis {
            Ok(analysis) => Arc::new(analysis),
            Err(error) => {
                tracing::error!(path = %path.display(), %error, "checking a buffer failed");
                return;
            }
        };
        let (publish, dependents, previous) = {
            let mut state = self.state();
            if state.documents.get(&path).map(|document| document.version) != Some(version) {
                tracing::debug!(path = %path.display(), version, "dropping a stale check");
                return;
            }
            let publish = state.feedback.update(&path, analysis.diagnostics());
            let publish: Vec<(Uri, Vec<_>, Option<i32>)> = publish
                .into_iter()
                .filter_map(|(file, diagnostics)| {
                    let (uri, version) = match state.documents.get(&file) {
                        Some(document) => (document.uri.clone(), Some(document.version)),
                        None => (convert::uri(&file)?, None),
                    };
                    Some((uri, diagnostics, version))
                })
                .collect();
            let previous = state.analyses.insert(path.clone(), analysis);
            let dependents = if cascade {
                dependents(&state, &path)
            } else {
                Vec::new()
            };
            (publish, dependents, previous)
        };
        for (uri, diagnostics, version) in publish {
            self.client
                .publish_diagnostics(uri, diagnostics, version)
                .await;
        }
        // Freeing a large analysis takes a few milliseconds: after publishing, not before.
        drop(previous);
        for (dependent, version) in dependents {
            self.schedule(dependent, version, Duration::ZERO, false);
        }
    }

    /// A snapshot of the open buffer `uri` as it is now.
    fn snapshot(&self, uri: &Uri) -> Option<Arc<Snapshot>> {
        let path = convert::path(uri)?;
        let text = {
            let state = self.state();
            let document = state.documents.get(&path)?;
            if let Some(snapshot) = state.snapshots.get(&path)
                && snapshot.version == document.version
            {
                return Some(snapshot.clone());
            }
            (document.text.clone(), document.version)
        };
        let discovered = self.discovered(&path);
        let snapshot = Arc::new(Snapshot::new(&path, &text.0, text.1).with_discovered(discovered));
        self.state().snapshots.insert(path, snapshot.clone());
        Some(snapshot)
    }

    /// What `path` can `use` from outside it. Discovery reads every tool and definition
    /// file, so a result is reused for [`DISCOVERY_FRESH`] rather than redone per keystroke.
    fn discovered(&self, path: &Path) -> Discovered {
        if let Some((at, discovered)) = self.state().discovered.get(path)
            && at.elapsed() < DISCOVERY_FRESH
        {
            return discovered.clone();
        }
        let root = project_root(path, &Disk);
        let discovered = Discovered::find(path, root.as_deref(), self.home.as_deref(), &Disk);
        self.state()
            .discovered
            .insert(path.to_path_buf(), (Instant::now(), discovered.clone()));
        discovered
    }

    /// The analysis of the open buffer `uri` at its current version, checked now if the
    /// last check is older.
    async fn analysis(&self, uri: &Uri) -> Option<Arc<Analysis>> {
        let path = convert::path(uri)?;
        let (text, version, buffers) = {
            let state = self.state();
            let document = state.documents.get(&path)?;
            if let Some(analysis) = state.analyses.get(&path)
                && analysis.version == document.version
            {
                return Some(analysis.clone());
            }
            (
                document.text.clone(),
                document.version,
                state.documents.texts(),
            )
        };
        let home = self.home.clone();
        let analysis = tokio::task::spawn_blocking(move || {
            Analysis::new(&path, &text, version, &buffers, &Disk, home.as_deref())
        })
        .await
        .ok()?;
        Some(Arc::new(analysis))
    }

    fn buffers(&self) -> HashMap<PathBuf, String> {
        self.state().documents.texts()
    }
}

/// The open workflows (other than `path`) whose last check read `path`.
fn dependents(state: &State, path: &Path) -> Vec<(PathBuf, i32)> {
    state
        .analyses
        .iter()
        .filter(|(owner, analysis)| *owner != path && analysis.dependencies.contains(path))
        .filter_map(|(owner, _)| {
            let document = state.documents.get(owner)?;
            Some((owner.clone(), document.version))
        })
        .collect()
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        self.state().watch_files = params
            .capabilities
            .workspace
            .and_then(|workspace| workspace.did_change_watched_files)
            .and_then(|watched| watched.dynamic_registration)
            .unwrap_or(false);
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                position_encoding: Some(PositionEncodingKind::UTF16),
                text_document_sync: Some(TextDocumentSyncCapability::Kind(
                    TextDocumentSyncKind::INCREMENTAL,
                )),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                definition_provider: Some(OneOf::Left(true)),
                references_provider: Some(OneOf::Left(true)),
                document_symbol_provider: Some(OneOf::Left(true)),
                completion_provider: Some(CompletionOptions {
                    trigger_characters: Some(vec![".".into(), "\"".into(), "=".into()]),
                    ..CompletionOptions::default()
                }),
                rename_provider: Some(OneOf::Right(RenameOptions {
                    prepare_provider: Some(true),
                    work_done_progress_options: Default::default(),
                })),
                code_action_provider: Some(CodeActionProviderCapability::Options(
                    CodeActionOptions {
                        code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
                        ..CodeActionOptions::default()
                    },
                )),
                ..ServerCapabilities::default()
            },
            server_info: Some(ServerInfo {
                name: "atomic".to_owned(),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        if !self.state().watch_files {
            return;
        }
        // Called workflows, schemas and the configuration change on disk too (a `git
        // checkout`, another editor): watch them so their callers are re-checked.
        let watchers = DidChangeWatchedFilesRegistrationOptions {
            watchers: ["**/*.kdl", "**/*.json"]
                .into_iter()
                .map(|glob| FileSystemWatcher {
                    glob_pattern: GlobPattern::String(glob.to_owned()),
                    kind: None,
                })
                .collect(),
        };
        let registration = Registration {
            id: "atomic-watch-files".to_owned(),
            method: "workspace/didChangeWatchedFiles".to_owned(),
            register_options: serde_json::to_value(watchers).ok(),
        };
        let client = self.client.clone();
        // The client answers on its own time; the server does not wait for it.
        tokio::spawn(async move {
            if let Err(error) = client.register_capability(vec![registration]).await {
                tracing::warn!(%error, "the client refused file watching");
            }
        });
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let document = params.text_document;
        let Some(path) = convert::path(&document.uri) else {
            tracing::warn!(
                uri = document.uri.as_str(),
                "ignoring a document that is not a file"
            );
            return;
        };
        let version = document.version;
        self.state()
            .documents
            .open(path.clone(), document.uri, document.text, version);
        self.schedule(path, version, Duration::ZERO, true);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let Some(path) = convert::path(&params.text_document.uri) else {
            return;
        };
        let version = params.text_document.version;
        let changed = self
            .state()
            .documents
            .change(&path, version, params.content_changes);
        if changed {
            self.schedule(path, version, self.debounce, true);
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let Some(path) = convert::path(&params.text_document.uri) else {
            return;
        };
        let (publish, dependents) = {
            let mut state = self.state();
            state.documents.close(&path);
            state.snapshots.remove(&path);
            let dependents = dependents(&state, &path);
            state.analyses.remove(&path);
            let publish = state.feedback.remove(&path);
            (publish, dependents)
        };
        for (file, diagnostics) in publish {
            if let Some(uri) = convert::uri(&file) {
                self.client
                    .publish_diagnostics(uri, diagnostics, None)
                    .await;
            }
        }
        // Workflows that read the buffer now read the file on disk.
        for (dependent, version) in dependents {
            self.schedule(dependent, version, Duration::ZERO, false);
        }
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        let dependents: Vec<(PathBuf, i32)> = {
            let state = self.state();
            params
                .changes
                .iter()
                .filter_map(|change| convert::path(&change.uri))
                .flat_map(|path| dependents(&state, &path))
                .collect()
        };
        for (dependent, version) in dependents {
            self.schedule(dependent, version, Duration::ZERO, false);
        }
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let TextDocumentPositionParams {
            text_document,
            position,
        } = params.text_document_position_params;
        Ok(self
            .snapshot(&text_document.uri)
            .and_then(|snapshot| hover::hover(&snapshot, position)))
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        let TextDocumentPositionParams {
            text_document,
            position,
        } = params.text_document_position_params;
        let Some(snapshot) = self.snapshot(&text_document.uri) else {
            return Ok(None);
        };
        let buffers = self.buffers();
        let files = Overlay::new(&buffers, &Disk);
        Ok(definition::definition(&snapshot, position, &files))
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let position = params.text_document_position;
        let Some(snapshot) = self.snapshot(&position.text_document.uri) else {
            return Ok(None);
        };
        let found = references::references(
            &snapshot,
            position.position,
            params.context.include_declaration,
        );
        Ok((!found.is_empty()).then_some(found))
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let position = params.text_document_position;
        Ok(self
            .snapshot(&position.text_document.uri)
            .and_then(|snapshot| completion::completion(&snapshot, position.position)))
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        Ok(self
            .snapshot(&params.text_document.uri)
            .map(|snapshot| DocumentSymbolResponse::Nested(symbols::document_symbols(&snapshot))))
    }

    async fn prepare_rename(
        &self,
        params: TextDocumentPositionParams,
    ) -> Result<Option<PrepareRenameResponse>> {
        Ok(self
            .snapshot(&params.text_document.uri)
            .and_then(|snapshot| rename::prepare_rename(&snapshot, params.position)))
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        let position = params.text_document_position;
        let Some(snapshot) = self.snapshot(&position.text_document.uri) else {
            return Ok(None);
        };
        match rename::rename(&snapshot, position.position, &params.new_name) {
            Ok(edit) => Ok(Some(edit)),
            Err(message) => Err(jsonrpc::Error::invalid_params(message)),
        }
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let Some(analysis) = self.analysis(&params.text_document.uri).await else {
            return Ok(None);
        };
        let actions = code_action::code_actions(
            analysis.snapshot(),
            &analysis.sources,
            &analysis.compiled.diagnostics,
            params.range,
        );
        Ok((!actions.is_empty()).then_some(actions))
    }
}
