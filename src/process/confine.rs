//! [`Confinement`]: what a sandboxed child may touch, enforced by the kernel (Landlock) on
//! the child and everything it starts, for its whole life.
//!
//! **Files.** It may write (create, change, remove) only beneath [`Confinement::writable`].
//! It may read and run anything else but [`Confinement::hidden`] — credential stores and the
//! like. Landlock only grants, beneath a directory; so "all but these" is granted as every
//! directory entry along the way to a hidden path except the one leading to it (`/` →
//! `/root` → `/root/.ssh` grants every entry of `/` but `root`, every entry of `/root` but
//! `.ssh`, …): a few dozen rules, enumerated when the child starts, so a file that appears
//! later beside a hidden path is not readable either.
//!
//! **Network.** It may open TCP connections only to [`Confinement::ports`] (the egress
//! proxy's, on loopback); every other `connect` fails with `EACCES`. Landlock names ports,
//! not addresses: the proxy's port is a random one of the ephemeral range, and the proxy
//! (see `sandbox::egress`) decides by host name what goes further. UDP is not confined
//! (Landlock has no UDP rules): name lookups work, and the proxy connects by name anyway.
//!
//! **How.** atomic starts a confined program through itself: `atomic __confine POLICY
//! PROGRAM ARGS…` builds the ruleset, enforces it on itself (with `no_new_privs`, so no
//! set-uid program regains what it lost) and execs the program, which keeps the process,
//! its group and its environment. Doing it in a fresh, single-threaded process keeps every
//! unsafe step of a fork (allocating between fork and exec) out of atomic, whose code
//! forbids `unsafe`. A kernel without Landlock ABI 4 (Linux 6.7: TCP rules) cannot confine
//! a child: [`Confinement::check`] says so before a step starts, and the helper refuses to
//! run the program rather than run it unconfined.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
};
use serde::{Deserialize, Serialize};

/// The Landlock ABI atomic needs: file rules with truncation and TCP connect rules.
const NEEDED: ABI = ABI::V4;

/// The first argument that makes `atomic` the confining helper.
pub const HELPER: &str = "__confine";

/// What a confined child may do (see the module).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confinement {
    /// Where it may write: directories (everything beneath) or files.
    pub writable: Vec<PathBuf>,
    /// What it may not read, write or run, though everything around it is readable.
    pub hidden: Vec<PathBuf>,
    /// The TCP ports it may connect to.
    pub ports: Vec<u16>,
}

/// Why a child could not be confined.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    /// The kernel has no (or too old a) Landlock.
    #[error(
        "this system cannot sandbox a step: {0} (Landlock ABI 4 — Linux 6.7 or later with Landlock enabled — is needed; `sandbox \"none\"` runs the step unconfined)"
    )]
    Unsupported(String),
    /// The ruleset could not be built.
    #[error("the sandbox could not be set up: {0}")]
    Rules(String),
}

impl Confinement {
    /// Whether this system can confine a child as atomic does.
    ///
    /// # Errors
    /// [`ConfineError::Unsupported`], naming what is missing.
    pub fn check() -> Result<(), ConfineError> {
        Self::default().ruleset().map(drop)
    }

    /// The program line that starts `program` with `args` confined: atomic's own executable
    /// as the helper.
    ///
    /// # Errors
    /// When atomic's executable cannot be found.
    pub fn wrap(&self, program: &Path, args: &[String]) -> std::io::Result<(PathBuf, Vec<String>)> {
        let helper = std::env::current_exe()?;
        let policy = serde_json::to_string(self).map_err(std::io::Error::other)?;
        let mut line = vec![HELPER.to_owned(), policy, program.display().to_string()];
        line.extend(args.iter().cloned());
        Ok((helper, line))
    }

    /// Enforces the confinement on this process, for good.
    ///
    /// # Errors
    /// When the kernel cannot enforce all of it (nothing is then enforced by halves: the
    /// caller must not go on).
    pub fn enforce(&self) -> Result<(), ConfineError> {
        let status = self
            .ruleset()?
            .restrict_self()
            .map_err(|error| ConfineError::Unsupported(error.to_string()))?;
        match status.ruleset {
            RulesetStatus::FullyEnforced => Ok(()),
            other => Err(ConfineError::Unsupported(format!(
                "the kernel enforced the rules {other:?}"
            ))),
        }
    }

    /// Builds the ruleset (see the module).
    fn ruleset(&self) -> Result<landlock::RulesetCreated, ConfineError> {
        let rules = |error: landlock::RulesetError| ConfineError::Rules(error.to_string());
        let all = AccessFs::from_all(NEEDED);
        let read = AccessFs::from_read(NEEDED);
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(all)
            .and_then(|ruleset| ruleset.handle_access(AccessNet::ConnectTcp))
            .map_err(|error| ConfineError::Unsupported(error.to_string()))?
            .create()
            .map_err(|error| ConfineError::Unsupported(error.to_string()))?;
        if *self == Self::default() {
            return Ok(ruleset);
        }
        for path in readable(&self.hidden) {
            if let Some(rule) = beneath(&path, read) {
                ruleset = ruleset.add_rule(rule).map_err(rules)?;
            }
        }
        for path in &self.writable {
            if self.hidden.iter().any(|hidden| path.starts_with(hidden)) {
                continue;
            }
            if let Some(rule) = beneath(path, all) {
                ruleset = ruleset.add_rule(rule).map_err(rules)?;
            }
        }
        for port in &self.ports {
            ruleset = ruleset
                .add_rule(NetPort::new(*port, AccessNet::ConnectTcp))
                .map_err(rules)?;
        }
        Ok(ruleset)
    }
}

/// `atomic __confine POLICY PROGRAM ARGS…` (`args` from POLICY on): confines this process
/// and becomes PROGRAM. Returns only when that fails, with the exit status to use (126, as
/// a shell does for a program it cannot run).
#[must_use]
pub fn run_helper(args: &[String]) -> i32 {
    #[allow(
        clippy::print_stderr,
        reason = "the helper's only channel is the child's stderr"
    )]
    let fail = |message: String| {
        eprintln!("atomic: {message}");
        126
    };
    let (Some(policy), Some(program)) = (args.first(), args.get(1)) else {
        return fail("usage: atomic __confine POLICY PROGRAM [ARG…]".to_owned());
    };
    let confinement: Confinement = match serde_json::from_str(policy) {
        Ok(confinement) => confinement,
        Err(error) => return fail(format!("the sandbox policy is not valid: {error}")),
    };
    if let Err(error) = confinement.enforce() {
        return fail(error.to_string());
    }
    use std::os::unix::process::CommandExt;
    let error = std::process::Command::new(program).args(&args[2..]).exec();
    fail(format!("could not start `{program}`: {error}"))
}

/// A rule granting `access` beneath `path` (only the rights a file can have, for a file);
/// `None` when the path is gone.
fn beneath(path: &Path, access: landlock::BitFlags<AccessFs>) -> Option<PathBeneath<PathFd>> {
    let metadata = std::fs::metadata(path).ok()?;
    let access = if metadata.is_dir() {
        access
    } else {
        access & AccessFs::from_file(NEEDED)
    };
    Some(PathBeneath::new(PathFd::new(path).ok()?, access))
}

/// The paths that together make everything readable but `hidden` (see the module).
fn readable(hidden: &[PathBuf]) -> Vec<PathBuf> {
    let hidden: Vec<PathBuf> = hidden
        .iter()
        .filter(|path| path.is_absolute())
        .cloned()
        .collect();
    let mut granted = Vec::new();
    grant(Path::new("/"), &hidden, &mut granted);
    granted
}

fn grant(dir: &Path, hidden: &[PathBuf], granted: &mut Vec<PathBuf>) {
    if hidden.iter().any(|path| path == dir) {
        return;
    }
    if !hidden.iter().any(|path| path.starts_with(dir)) {
        granted.push(dir.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        grant(&entry.path(), hidden, granted);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_is_readable_but_the_hidden_paths() {
        let home = tempfile::tempdir().expect("a home");
        for dir in [".ssh", ".config/gh", ".config/editor", "src"] {
            std::fs::create_dir_all(home.path().join(dir)).expect("mkdir");
        }
        std::fs::write(home.path().join(".netrc"), "machine x").expect("write");
        std::fs::write(home.path().join("notes"), "n").expect("write");
        let hidden = [
            home.path().join(".ssh"),
            home.path().join(".config/gh"),
            home.path().join(".netrc"),
        ];
        let granted = readable(&hidden);
        for path in &hidden {
            assert!(
                !granted.iter().any(|grant| path.starts_with(grant)),
                "{} is readable through {granted:?}",
                path.display()
            );
        }
        for visible in ["src", "notes", ".config/editor"] {
            let path = home.path().join(visible);
            assert!(
                granted.iter().any(|grant| path.starts_with(grant)),
                "{visible} is not readable: {granted:?}"
            );
        }
        assert!(
            granted
                .iter()
                .any(|grant| Path::new("/usr/bin").starts_with(grant))
        );
    }
}
