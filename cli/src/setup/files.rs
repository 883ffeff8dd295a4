//! Applying setup's file changes: unified diffs for `--dry-run`, a backup of every file that is
//! replaced or removed, atomic replacement (temp file + rename) keeping the file's mode.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// One file's change: its current text (`None`: absent) and the text it should have
/// (`None`: remove it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The file.
    pub path: PathBuf,
    /// Current contents.
    pub before: Option<String>,
    /// Wanted contents.
    pub after: Option<String>,
    /// A file the host executes (Cline's hook): written with mode 0755.
    pub executable: bool,
}

impl Change {
    /// Whether applying it changes anything.
    pub fn is_noop(&self) -> bool {
        self.before == self.after
    }
}

/// Reads a file that may not exist; anything but "not found" is an error naming it.
pub fn read_optional(path: &Path) -> Result<Option<String>, String> {
    match fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| format!("{} is not UTF-8 text", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// The unified diff of one change (`--- a` / `+++ b` naming the file).
pub fn diff(change: &Change) -> String {
    let before = change.before.as_deref().unwrap_or("");
    let after = change.after.as_deref().unwrap_or("");
    let name = change.path.display().to_string();
    let old = if change.before.is_some() {
        name.clone()
    } else {
        "/dev/null".into()
    };
    let new = if change.after.is_some() {
        name
    } else {
        "/dev/null".into()
    };
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(&old, &new)
        .to_string()
}

/// Applies the changes (or, with `dry_run`, prints their diffs), reporting each file.
pub fn apply(changes: &[Change], dry_run: bool) -> Result<(), String> {
    for change in changes {
        let path = change.path.display();
        if change.is_noop() {
            println!("unchanged {path}");
            continue;
        }
        if dry_run {
            print!("{}", diff(change));
            continue;
        }
        let backup = match &change.before {
            Some(_) => Some(backup(&change.path)?),
            None => None,
        };
        match &change.after {
            Some(text) => write_atomic(&change.path, text, change.executable)?,
            None => {
                fs::remove_file(&change.path).map_err(|e| format!("cannot remove {path}: {e}"))?
            }
        }
        let verb = match (&change.before, &change.after) {
            (None, _) => "created",
            (Some(_), None) => "removed",
            _ => "updated",
        };
        match backup {
            Some(b) => println!("{verb} {path} (backup: {})", b.display()),
            None => println!("{verb} {path}"),
        }
    }
    if dry_run {
        println!("(dry run: nothing was written)");
    }
    Ok(())
}

/// Copies `path` to `<path>.herdr-link-backup-<unix seconds>[-n]` (never overwriting one).
fn backup(path: &Path) -> Result<PathBuf, String> {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let base = format!("{}.herdr-link-backup-{secs}", path.display());
    let mut candidate = PathBuf::from(&base);
    let mut n = 1;
    while candidate.exists() {
        candidate = PathBuf::from(format!("{base}-{n}"));
        n += 1;
    }
    fs::copy(path, &candidate)
        .map_err(|e| format!("cannot back up {} ({e}); nothing written", path.display()))?;
    Ok(candidate)
}

/// Writes through a temp file in the same directory, then renames; keeps an existing mode
/// (`executable`: mode 0755).
fn write_atomic(path: &Path, text: &str, executable: bool) -> Result<(), String> {
    let shown = path.display();
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let tmp = PathBuf::from(format!(
        "{}.herdr-link-tmp-{}",
        path.display(),
        std::process::id()
    ));
    let result = (|| -> std::io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        if let Ok(meta) = fs::metadata(path) {
            fs::set_permissions(&tmp, meta.permissions())?;
        }
        if executable {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&tmp, fs::Permissions::from_mode(0o755))?;
        }
        fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        format!("cannot write {shown}: {e}")
    })
}
