//! What `run` and `resume` build around a compiled workflow before driving it: the
//! subgraph loader, the one snapshot of the process environment (split into what
//! providers may use and what templates may read), the providers, and the redactor.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use super::env;
use super::providers;
use super::subgraphs::DiskLoader;
use super::workflow::Loaded;
use crate::cli::project::Project;
use crate::providers::{Environment, Redactor, ToolEnv};
use crate::runtime::Providers;

/// The run's surroundings.
pub(crate) struct Setup {
    /// Subgraph plans.
    pub(crate) loader: Arc<DiskLoader>,
    /// Providers by name (none for a dry run).
    pub(crate) providers: Providers,
    /// Variables templates may read.
    pub(crate) env: HashMap<String, String>,
    /// Secrets to keep out of the store and the terminal.
    pub(crate) redactor: Redactor,
    /// The environment of tool nodes, hooks and custom tools: atomic's without any
    /// provider key.
    pub(crate) tool_env: Environment,
    /// Where the run's trace goes, if anywhere.
    pub(crate) telemetry: Option<crate::telemetry::Settings>,
    /// The project's `workspace` setting, for workflows that do not say.
    pub(crate) workspace: Option<crate::ir::WorkspaceMode>,
    /// The project's `sandbox`, for workflows that declare none.
    pub(crate) sandbox: Option<Arc<crate::ir::Sandbox>>,
}

/// Builds the surroundings of `loaded`; providers only when `build_providers`, recording
/// into `record` when given.
///
/// # Errors
/// A provider that cannot be built, or a cassette that cannot be written.
pub(crate) fn setup(
    project: &Project,
    loaded: &Loaded,
    build_providers: bool,
    record: Option<&Path>,
) -> Result<Setup, String> {
    let mut sources = crate::source::Sources::new();
    let (config, _) = project.config(&mut sources);
    let prices = crate::providers::PriceTable::with_overrides(config.prices().to_vec());
    let telemetry_config = config.telemetry().cloned();
    let workspace = config.workspace();
    let sandbox = config.sandbox().cloned().map(Arc::new);
    let loader = Arc::new(DiskLoader::new(config));
    // The one read of the process environment.
    let environment = Environment::from_process();
    let telemetry = crate::telemetry::Settings::resolve(telemetry_config.as_ref(), |name| {
        environment.get(name)
    });
    let callees = loader.callees(&loaded.plan, &loaded.dir());
    let template_env = env::for_templates(
        &environment,
        std::iter::once(&*loaded.plan).chain(callees.iter().map(|(plan, _)| &**plan)),
    );
    let decls = providers::declarations(loaded, &loader);
    let redactor = providers::redactor(&environment, &decls);
    let tool_env = providers::tool_env(&environment, &decls);
    let providers = if build_providers {
        let tools = ToolEnv {
            spawner: crate::process::local(),
            sandbox: None,
            env: tool_env.clone(),
            redactor: redactor.clone(),
        };
        providers::build(
            &decls,
            &environment,
            tools,
            record,
            &loaded.workflow().name.value,
            prices,
        )?
    } else {
        Providers::new()
    };
    Ok(Setup {
        loader,
        providers,
        env: template_env,
        redactor,
        tool_env,
        telemetry,
        workspace,
        sandbox,
    })
}
