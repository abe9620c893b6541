//! Whose diagnostics a file shows (gleam's `Feedback`). A file's diagnostics come from its
//! own analysis and from the analyses of workflows that call it (which report a broken
//! callee's errors in the callee). Each analysis replaces only what it reported before; a
//! file shows the union, so checking one workflow never wipes what another found.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use tower_lsp_server::ls_types::Diagnostic;

/// Diagnostics by reporting analysis and file.
#[derive(Debug, Default)]
pub struct Feedback {
    by_owner: HashMap<PathBuf, BTreeMap<PathBuf, Vec<Diagnostic>>>,
}

impl Feedback {
    /// Nothing reported yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Records what the analysis of `owner` reported, by file; returns every file whose
    /// diagnostics may have changed, with its full list to publish.
    pub fn update(
        &mut self,
        owner: &Path,
        reported: BTreeMap<PathBuf, Vec<Diagnostic>>,
    ) -> Vec<(PathBuf, Vec<Diagnostic>)> {
        let mut touched: BTreeSet<PathBuf> = reported.keys().cloned().collect();
        if let Some(before) = self.by_owner.insert(owner.to_path_buf(), reported) {
            touched.extend(before.into_keys());
        }
        self.publish(touched)
    }

    /// Forgets what `owner` reported (its buffer closed).
    pub fn remove(&mut self, owner: &Path) -> Vec<(PathBuf, Vec<Diagnostic>)> {
        let touched = self
            .by_owner
            .remove(owner)
            .map(BTreeMap::into_keys)
            .into_iter()
            .flatten()
            .collect();
        self.publish(touched)
    }

    fn publish(&self, touched: BTreeSet<PathBuf>) -> Vec<(PathBuf, Vec<Diagnostic>)> {
        touched
            .into_iter()
            .map(|file| {
                let merged = self.merged(&file);
                (file, merged)
            })
            .collect()
    }

    /// The union of what every analysis reported in `file`: its own analysis first, then
    /// its callers', without duplicates.
    #[must_use]
    pub fn merged(&self, file: &Path) -> Vec<Diagnostic> {
        let own = self
            .by_owner
            .get(file)
            .and_then(|reported| reported.get(file));
        let mut owners: Vec<&PathBuf> = self
            .by_owner
            .keys()
            .filter(|owner| *owner != file)
            .collect();
        owners.sort();
        let others = owners
            .into_iter()
            .filter_map(|owner| self.by_owner.get(owner)?.get(file));
        let mut merged: Vec<Diagnostic> = Vec::new();
        for diagnostic in own.into_iter().chain(others).flatten() {
            if !merged.contains(diagnostic) {
                merged.push(diagnostic.clone());
            }
        }
        merged
    }
}

#[cfg(test)]
mod tests {
    use tower_lsp_server::ls_types::{Position, Range};

    use super::*;

    fn diagnostic(message: &str) -> Diagnostic {
        Diagnostic::new_simple(
            Range::new(Position::new(0, 0), Position::new(0, 1)),
            message.to_owned(),
        )
    }

    fn messages(list: &[Diagnostic]) -> Vec<&str> {
        list.iter().map(|d| d.message.as_str()).collect()
    }

    #[test]
    fn callers_add_to_a_callee_and_clear_only_their_own() {
        let (caller, callee) = (PathBuf::from("/a.kdl"), PathBuf::from("/b.kdl"));
        let mut feedback = Feedback::new();
        let published = feedback.update(
            &callee,
            BTreeMap::from([(callee.clone(), vec![diagnostic("own")])]),
        );
        assert_eq!(published.len(), 1);
        let published = feedback.update(
            &caller,
            BTreeMap::from([
                (caller.clone(), vec![]),
                (
                    callee.clone(),
                    vec![diagnostic("own"), diagnostic("seen by caller")],
                ),
            ]),
        );
        assert_eq!(messages(&published[1].1), ["own", "seen by caller"]);
        // The caller is fixed: the callee keeps its own diagnostics.
        let published = feedback.update(&caller, BTreeMap::from([(caller.clone(), vec![])]));
        let callee_now = published.iter().find(|(file, _)| *file == callee).unwrap();
        assert_eq!(messages(&callee_now.1), ["own"]);
        let published = feedback.remove(&callee);
        assert_eq!(published, vec![(callee.clone(), vec![])]);
    }
}
