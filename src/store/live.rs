//! A run's live feed: what its steps are doing before they commit (an agent's text as it
//! streams, its tool calls, a tool's output lines), appended by the process driving the
//! run to `<store dir>/live/<run>.jsonl` for views in other processes (`atomic ui`). The
//! store's log has a step's events only once the step commits; the feed fills the gap.
//!
//! It is not durable and not the record: nothing is synced, lines of steps that committed
//! are superseded by the log, the file is started afresh now and then (a new file renamed
//! over the old, so a reader sees a new inode and starts again from its top) and removed
//! when the run stops. Each line is one [`LiveLine`]: `{"step": N, "event": {...}}`.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::RunId;

/// The feed of `run` for a store whose database is at `db`.
#[must_use]
pub fn live_path(db: &Path, run: &RunId) -> PathBuf {
    db.parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("live"), |dir| dir.join("live"))
        .join(format!("{}.jsonl", run.as_str()))
}

/// One line of a feed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LiveLine {
    /// The step the event belongs to (a parallel's branches share their parallel's).
    pub step: u64,
    /// The run event.
    pub event: Value,
}

/// Appends to a feed.
#[derive(Debug)]
pub struct LiveWriter {
    path: PathBuf,
    file: BufWriter<File>,
    /// Bytes in the current file.
    written: u64,
}

impl LiveWriter {
    /// Starts the feed at `path` afresh (private to the user: it holds what agents say).
    ///
    /// # Errors
    /// The directory or the file cannot be made.
    pub fn create(path: &Path) -> io::Result<Self> {
        let file = fresh(path)?;
        Ok(Self {
            path: path.to_owned(),
            file: BufWriter::new(file),
            written: 0,
        })
    }

    /// Appends one line (buffered: see [`LiveWriter::flush`]).
    ///
    /// # Errors
    /// The write failed.
    pub fn append(&mut self, line: &LiveLine) -> io::Result<()> {
        let mut text = serde_json::to_vec(line).map_err(io::Error::other)?;
        text.push(b'\n');
        self.file.write_all(&text)?;
        self.written += text.len() as u64;
        Ok(())
    }

    /// Hands what is buffered to the kernel, where readers see it.
    ///
    /// # Errors
    /// The write failed.
    pub fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }

    /// Bytes in the current file.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.written
    }

    /// Whether the current file is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.written == 0
    }

    /// Starts a new, empty file in its place (readers start again from its top).
    ///
    /// # Errors
    /// The new file cannot be made.
    pub fn restart(&mut self) -> io::Result<()> {
        self.file.flush()?;
        self.file = BufWriter::new(fresh(&self.path)?);
        self.written = 0;
        Ok(())
    }

    /// Removes the feed (the run stopped).
    pub fn remove(self) {
        drop(self.file);
        let _ = fs::remove_file(&self.path);
    }
}

/// An empty file at `path`, made beside it and renamed over it, so its inode is new.
fn fresh(path: &Path) -> io::Result<File> {
    let dir = path.parent().unwrap_or(Path::new("."));
    private_dir(dir)?;
    let mut staging = path.as_os_str().to_owned();
    staging.push(".new");
    let staging = PathBuf::from(staging);
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(&staging)?;
    fs::rename(&staging, path)?;
    Ok(file)
}

#[cfg(unix)]
fn private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn private_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)
}

/// Reads a feed as it grows, from where it got to.
#[derive(Debug)]
pub struct LiveReader {
    path: PathBuf,
    /// The file being read, and its identity.
    open: Option<(File, FileId)>,
    /// A line not yet complete.
    partial: Vec<u8>,
}

/// What tells one file from another at the same path.
type FileId = (u64, u64);

impl LiveReader {
    /// A reader of the feed at `path` (which may not exist yet, or any more).
    #[must_use]
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            open: None,
            partial: Vec::new(),
        }
    }

    /// The lines appended since the last read, and whether the feed was started afresh
    /// (then they are the new file's, from its top). A feed that is missing or cannot be
    /// read has no lines: it only ever adds to what the store says.
    pub fn read(&mut self) -> (Vec<LiveLine>, bool) {
        let current = fs::metadata(&self.path).ok().map(|meta| file_id(&meta));
        let mut restarted = false;
        if current.is_none() {
            return (Vec::new(), false);
        }
        if self.open.as_ref().map(|(_, id)| Some(*id)) != Some(current) {
            restarted = self.open.is_some();
            self.partial.clear();
            self.open = File::open(&self.path).ok().and_then(|file| {
                let id = file_id(&file.metadata().ok()?);
                Some((file, id))
            });
            if self.open.is_none() {
                return (Vec::new(), restarted);
            }
        }
        let Some((file, _)) = self.open.as_mut() else {
            return (Vec::new(), restarted);
        };
        let mut bytes = std::mem::take(&mut self.partial);
        if file.read_to_end(&mut bytes).is_err() {
            return (Vec::new(), restarted);
        }
        let complete = bytes
            .iter()
            .rposition(|&byte| byte == b'\n')
            .map_or(0, |at| at + 1);
        self.partial = bytes.split_off(complete);
        let lines = bytes
            .split(|&byte| byte == b'\n')
            .filter(|line| !line.is_empty())
            .filter_map(|line| serde_json::from_slice(line).ok())
            .collect();
        (lines, restarted)
    }
}

#[cfg(unix)]
fn file_id(meta: &fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn file_id(meta: &fs::Metadata) -> FileId {
    let created = meta
        .created()
        .ok()
        .and_then(|at| at.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |at| at.as_nanos() as u64);
    (created, 0)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn line(step: u64, text: &str) -> LiveLine {
        LiveLine {
            step,
            event: json!({"type": "agent", "node": "a", "event": {"type": "text-delta", "text": text}}),
        }
    }

    #[test]
    fn a_reader_sees_whole_lines_once_and_a_restarted_feed_from_its_top() {
        let dir = tempfile::tempdir().unwrap();
        let path = live_path(&dir.path().join("runs.db"), &RunId::new("01r"));
        let mut reader = LiveReader::new(path.clone());
        assert_eq!(reader.read(), (Vec::new(), false), "no feed yet");

        let mut writer = LiveWriter::create(&path).unwrap();
        writer.append(&line(1, "Hel")).unwrap();
        writer.flush().unwrap();
        // Half a line, as a reader may find it mid-write.
        let whole = serde_json::to_string(&line(1, "lo")).unwrap();
        let (head, tail) = whole.split_at(10);
        let mut raw = OpenOptions::new().append(true).open(&path).unwrap();
        raw.write_all(head.as_bytes()).unwrap();
        assert_eq!(reader.read(), (vec![line(1, "Hel")], false));
        raw.write_all(format!("{tail}\n").as_bytes()).unwrap();
        assert_eq!(reader.read(), (vec![line(1, "lo")], false));
        assert_eq!(reader.read(), (Vec::new(), false), "nothing new");

        writer.restart().unwrap();
        writer.append(&line(2, "Next")).unwrap();
        writer.flush().unwrap();
        assert_eq!(reader.read(), (vec![line(2, "Next")], true));

        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "only the user reads what agents say");
        }
        writer.remove();
        assert!(!path.exists());
        assert_eq!(
            reader.read(),
            (Vec::new(), false),
            "a removed feed has nothing"
        );
    }
}
