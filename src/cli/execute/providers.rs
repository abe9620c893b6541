//! The providers of a run: every `provider` the workflow (and the subgraphs it calls)
//! declares, built by the registry from one snapshot of the process environment, and
//! wrapped to record into a cassette under `--record`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cli::render::locate;
use crate::ir::ProviderDecl;
use crate::providers::{self, CassetteRecorder, Environment, ProviderContext, Redactor, ToolEnv};
use crate::runtime::Providers;

use super::subgraphs::DiskLoader;
use super::workflow::Loaded;

/// A provider declaration, the directory its file is in (relative cassette and command
/// paths start there) and where it is declared, for messages.
pub(crate) struct Declared {
    decl: ProviderDecl,
    dir: PathBuf,
    place: String,
}

/// The providers `loaded` and the subgraphs it calls declare. A subgraph's declaration of
/// a name the caller already declares is ignored: the caller's wins.
pub(crate) fn declarations(loaded: &Loaded, loader: &DiskLoader) -> Vec<Declared> {
    let dir = loaded.dir();
    let mut decls: Vec<Declared> = loaded
        .workflow()
        .providers
        .iter()
        .map(|decl| {
            let at = locate(&loaded.sources, decl.span);
            Declared {
                decl: decl.clone(),
                dir: dir.clone(),
                place: format!("{}:{}:{}", at.file, at.line, at.column),
            }
        })
        .collect();
    for (callee, dir) in loader.callees(&loaded.plan, &dir) {
        for decl in &callee.workflow().providers {
            if !decls
                .iter()
                .any(|known| known.decl.name.value == decl.name.value)
            {
                let place = format!(
                    "declared by subgraph `{}` in `{}`",
                    callee.workflow().name.value,
                    dir.display()
                );
                decls.push(Declared {
                    decl: decl.clone(),
                    dir: dir.clone(),
                    place,
                });
            }
        }
    }
    decls
}

/// What must never be written or printed: the values of the variables `decls` read keys
/// from, of variables named like secrets, and anything shaped like a well-known key.
pub(crate) fn redactor(env: &Environment, decls: &[Declared]) -> Redactor {
    let decls: Vec<ProviderDecl> = decls.iter().map(|declared| declared.decl.clone()).collect();
    Redactor::for_workflow(env, &decls)
}

/// The environment of every child that is not an agent CLI: `env` without the keys of
/// any provider the run declares (see [`Environment::without_provider_keys`]).
pub(crate) fn tool_env(env: &Environment, decls: &[Declared]) -> Environment {
    env.without_provider_keys(
        decls
            .iter()
            .filter_map(|declared| declared.decl.api_key_env.as_ref())
            .map(|name| name.value.as_str()),
    )
}

/// Builds the providers `decls` declare, recording into `record` when given; their custom
/// tools run with `tool_env`, their budgets are metered with `prices`.
///
/// # Errors
/// A message naming the provider, where it is declared and what is wrong (a missing
/// key, CLI or cassette…), or the cassette that cannot be written.
pub(crate) fn build(
    decls: &[Declared],
    env: &Environment,
    tool_env: ToolEnv,
    record: Option<&Path>,
    workflow: &str,
    prices: Arc<providers::PriceTable>,
) -> Result<Providers, String> {
    let recorder = match record {
        Some(path) => {
            let recorder = CassetteRecorder::create(path, Some(workflow), redactor(env, decls))
                .map_err(|error| error.to_string())?;
            Some(Arc::new(recorder))
        }
        None => None,
    };
    let mut built = Providers::new();
    for Declared { decl, dir, place } in decls {
        let cx = ProviderContext {
            workflow_dir: dir,
            env,
            recorder: recorder.clone(),
            tool_env: tool_env.clone(),
            prices: Arc::clone(&prices),
            spawner: crate::process::local(),
        };
        let provider = providers::build(decl, &cx).map_err(|error| {
            format!(
                "provider `{}` ({place}) cannot be used: {error}",
                decl.name.value
            )
        })?;
        built = built.with(decl.name.value.clone(), provider);
    }
    Ok(built)
}
