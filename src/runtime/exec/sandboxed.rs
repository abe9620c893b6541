//! A step's sandbox while it runs: its declaration found (the step's own, else the
//! workflow's, else the project's), the system checked able to confine, and the step's
//! proxy and temp directory started, its refusals reported as `sandbox-denied` events.

use std::path::PathBuf;
use std::sync::Arc;

use crate::ir::Sandbox;
use crate::process::Confinement;
use crate::runtime::NodeError;
use crate::runtime::event::RunEvent;
use crate::runtime::frame::Frame;
use crate::runtime::shared::Shared;
use crate::sandbox::{Reach, Refusals, Running};

/// The sandbox a step runs in: its own declaration, else the workflow's, else the
/// project's; `None` when none applies or it says `"none"`.
pub(crate) fn declared<'a>(shared: &'a Shared, own: Option<&'a Sandbox>) -> Option<&'a Sandbox> {
    own.or(shared.workflow().sandbox.as_ref())
        .or(shared.ctx.sandbox.as_deref())
        .filter(|sandbox| sandbox.confines())
}

/// What step `node` working in `frame`'s workspace may reach under `sandbox`; `own` are
/// the paths below the home directory that are its program's own (an agent CLI's).
///
/// # Errors
/// When the system cannot confine a step: the step must not run unconfined.
pub(crate) fn reach(
    shared: &Shared,
    frame: &Frame,
    node: &str,
    sandbox: &Sandbox,
    own: &[&str],
) -> Result<Reach, NodeError> {
    if !shared.ctx.executor.can_sandbox() {
        return Err(NodeError::fatal(format!(
            "`{node}` runs in a sandbox, which this engine cannot give it yet (its steps run on other machines than the egress proxy): run it locally, or `sandbox \"none\"`"
        )));
    }
    Confinement::check().map_err(|error| NodeError::fatal(format!("`{node}`: {error}")))?;
    let home = shared
        .ctx
        .tool_env
        .get("HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(PathBuf::from));
    let root = shared.workspace(frame).root();
    let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
    Ok(Reach::of(sandbox, &root, home.as_deref(), own))
}

/// Starts step `node`'s sandbox: its proxy (refusals reported as `sandbox-denied`) and its
/// temp directory, held until the step's processes end.
///
/// # Errors
/// When the proxy or the temp directory cannot be made.
pub(crate) async fn start(
    shared: &Arc<Shared>,
    node: &Arc<str>,
    reach: &Reach,
) -> Result<Running, NodeError> {
    let (reporter, node_id) = (Arc::clone(shared), node.clone());
    let refusals: Refusals = Arc::new(move |refused: crate::sandbox::Refused| {
        reporter.emit(RunEvent::SandboxDenied {
            node: node_id.clone(),
            target: refused.target,
            reason: refused.reason,
        });
    });
    Running::start(reach, refusals).await.map_err(|error| {
        NodeError::fatal(format!("`{node}`: the sandbox could not start: {error}"))
    })
}
