//! What `herdr --version` says, read once for everyone who asks (doctor's binary check, setup's
//! decision to pin `HERDR_BIN_PATH`): the version, and the two thresholds Link knows.

/// A Herdr release as `herdr --version` prints it (`herdr X.Y.Z` or `herdr X.Y.Z-pre…`).
/// Ordered as releases are: a pre-release sorts before its release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    /// `X`.
    pub major: u64,
    /// `Y`.
    pub minor: u64,
    /// `Z`.
    pub patch: u64,
    /// Whether this is the release itself (`false` for a `-preview…` build of it).
    pub release: bool,
}

impl Version {
    /// `X.Y.Z` (a release).
    pub const fn new(major: u64, minor: u64, patch: u64) -> Version {
        Version {
            major,
            minor,
            patch,
            release: true,
        }
    }
}

/// The oldest Herdr Link supports.
pub const OLDEST_SUPPORTED: Version = Version::new(0, 8, 0);

/// The first Herdr that sets `HERDR_BIN_PATH` in its panes (before it, agents need it exported
/// or pinned by setup).
pub const SETS_BIN_PATH: Version = Version::new(0, 8, 2);

/// Reads the first line of `herdr --version` (`herdr 0.8.2`, `herdr 0.8.2-preview.7`, build
/// metadata after `+` ignored). `None` for anything else.
pub fn parse(line: &str) -> Option<Version> {
    let word = line
        .trim()
        .strip_prefix("herdr ")?
        .split_whitespace()
        .next()?;
    let word = word.split('+').next()?;
    let (core, release) = match word.split_once('-') {
        Some((core, _)) => (core, false),
        None => (word, true),
    };
    let mut parts = core.split('.').map(|p| {
        (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .then(|| p.parse::<u64>().ok())
            .flatten()
    });
    let (major, minor, patch) = (parts.next()??, parts.next()??, parts.next()??);
    parts.next().is_none().then_some(Version {
        major,
        minor,
        patch,
        release,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_order_as_releases() {
        assert_eq!(parse("herdr 0.8.0"), Some(Version::new(0, 8, 0)));
        assert_eq!(parse("herdr 0.8.2\n"), Some(Version::new(0, 8, 2)));
        assert_eq!(parse("herdr 0.10.1"), Some(Version::new(0, 10, 1)));
        let preview = parse("herdr 0.8.2-preview.7").unwrap();
        assert!(!preview.release);
        assert!(
            preview < SETS_BIN_PATH,
            "a preview is older than its release"
        );
        assert!(parse("herdr 0.8.1").unwrap() < SETS_BIN_PATH);
        assert!(parse("herdr 0.8.1").unwrap() >= OLDEST_SUPPORTED);
        assert!(parse("herdr 0.7.9").unwrap() < OLDEST_SUPPORTED);
        assert!(parse("herdr 0.9.0").unwrap() >= SETS_BIN_PATH);
        assert_eq!(parse("herdr 0.9.0+abc"), Some(Version::new(0, 9, 0)));
        for bad in [
            "herdr",
            "herdr x.y.z",
            "tmux 3.4",
            "herdr 1.2",
            "herdr 1.2.3.4",
            "herdr +1.2.3",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
