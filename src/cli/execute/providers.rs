//! The providers of a run: every `provider` the workflow (and the subgraphs it calls)
//! declares, built by the registry from one snapshot of the process environment, and
//! wrapped to record into a cassette under `--record`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cli::render::locate;
use crate::ir::ProviderDecl;
use crate::providers::{self, CassetteRecorder, Environment, ProviderContext, Redactor};
use crate::runtime::Providers;

use super::subgraphs::DiskLoader;
use super::workflow::Loaded;

/// Builds the providers `loaded` and its subgraphs declare. A subgraph's declaration of a
/// name the caller already declares is ignored: the caller's wins.
///
/// # Errors
/// A message naming the provider, where it is declared and what is wrong (a missing
/// key, CLI or cassette…), or the cassette that cannot be written.
pub(crate) fn build(
    loaded: &Loaded,
    loader: &DiskLoader,
    env: &Environment,
    record: Option<&Path>,
) -> Result<Providers, String> {
    let dir = loaded.dir();
    // (declaration, its file's directory, where it is declared for messages)
    let mut decls: Vec<(ProviderDecl, PathBuf, String)> = loaded
        .workflow()
        .providers
        .iter()
        .map(|decl| {
            let at = locate(&loaded.sources, decl.span);
            let place = format!("{}:{}:{}", at.file, at.line, at.column);
            (decl.clone(), dir.clone(), place)
        })
        .collect();
    for (callee, dir) in loader.callees(&loaded.plan, &dir) {
        for decl in &callee.workflow().providers {
            if !decls
                .iter()
                .any(|(known, ..)| known.name.value == decl.name.value)
            {
                let place = format!(
                    "declared by subgraph `{}` in `{}`",
                    callee.workflow().name.value,
                    dir.display()
                );
                decls.push((decl.clone(), dir.clone(), place));
            }
        }
    }
    let recorder = match record {
        Some(path) => {
            let all: Vec<ProviderDecl> = decls.iter().map(|(decl, ..)| decl.clone()).collect();
            let redactor = Redactor::for_workflow(env, &all);
            let recorder =
                CassetteRecorder::create(path, Some(&loaded.workflow().name.value), redactor)
                    .map_err(|error| error.to_string())?;
            Some(Arc::new(recorder))
        }
        None => None,
    };
    let mut built = Providers::new();
    for (decl, dir, place) in &decls {
        let cx = ProviderContext {
            workflow_dir: dir,
            env,
            recorder: recorder.clone(),
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
