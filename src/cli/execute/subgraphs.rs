//! Subgraph workflows for a run: compiled from disk once, on first use, through the same
//! [`compile`](crate::compile::compile) as the caller. The runtime asks for them by path
//! ([`SubgraphLoader`]); the CLI also walks them up front, because their `provider`
//! declarations must be built before the run starts.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::compile::Config;
use crate::ir::NodeKind;
use crate::lower::Plan;
use crate::runtime::SubgraphLoader;

use super::workflow::compile_quietly;

/// Compiles subgraph workflows from disk, caching each plan by path.
pub(crate) struct DiskLoader {
    config: Config,
    plans: Mutex<HashMap<PathBuf, Arc<Plan>>>,
}

impl DiskLoader {
    /// A loader applying the project's rule configuration.
    pub(crate) fn new(config: Config) -> Self {
        Self {
            config,
            plans: Mutex::new(HashMap::new()),
        }
    }

    /// Every workflow `plan` (in directory `dir`) calls as a subgraph, transitively, with
    /// its directory. Subgraphs that do not compile are left out here: running them
    /// reports the error at the calling node.
    pub(crate) fn callees(&self, plan: &Plan, dir: &Path) -> Vec<(Arc<Plan>, PathBuf)> {
        let mut found = Vec::new();
        let mut seen = Vec::new();
        self.walk(plan, dir, &mut seen, &mut found);
        found
    }

    fn walk(
        &self,
        plan: &Plan,
        dir: &Path,
        seen: &mut Vec<PathBuf>,
        found: &mut Vec<(Arc<Plan>, PathBuf)>,
    ) {
        for node in &plan.workflow().nodes {
            let NodeKind::Subgraph(subgraph) = &node.kind else {
                continue;
            };
            let path = dir.join(subgraph.file());
            if seen.contains(&path) {
                continue;
            }
            seen.push(path.clone());
            let Ok(callee) = self.load(&path) else {
                continue;
            };
            let callee_dir = path
                .parent()
                .map_or_else(|| dir.to_path_buf(), Path::to_path_buf);
            self.walk(&callee, &callee_dir, seen, found);
            found.push((callee, callee_dir));
        }
    }
}

impl SubgraphLoader for DiskLoader {
    fn load(&self, path: &Path) -> Result<Arc<Plan>, String> {
        let mut plans = self
            .plans
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(plan) = plans.get(path) {
            return Ok(Arc::clone(plan));
        }
        let plan = Arc::new(compile_quietly(path, &self.config)?);
        plans.insert(path.to_path_buf(), Arc::clone(&plan));
        Ok(plan)
    }
}
