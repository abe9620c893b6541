//! Semantic versions: `MAJOR.MINOR.PATCH` with an optional `-pre.release` and `+build`,
//! compared by semver precedence (build metadata ignored).

use std::cmp::Ordering;

/// A parsed version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Version {
    core: [u64; 3],
    pre: Vec<String>,
}

impl Version {
    /// Parses `text`, or says what is wrong with it.
    pub(crate) fn parse(text: &str) -> Result<Self, &'static str> {
        let text = text.split_once('+').map_or(text, |(version, build)| {
            if identifiers_ok(build, false) {
                version
            } else {
                ""
            }
        });
        if text.is_empty() {
            return Err("not MAJOR.MINOR.PATCH");
        }
        let (core, pre) = match text.split_once('-') {
            Some((core, pre)) => {
                if !identifiers_ok(pre, true) {
                    return Err("invalid pre-release");
                }
                (core, pre.split('.').map(str::to_owned).collect())
            }
            None => (text, Vec::new()),
        };
        let mut parts = [0u64; 3];
        let mut count = 0;
        for part in core.split('.') {
            if count == 3 || !numeric_ok(part) {
                return Err("not MAJOR.MINOR.PATCH");
            }
            parts[count] = part.parse().map_err(|_| "number too large")?;
            count += 1;
        }
        if count != 3 {
            return Err("not MAJOR.MINOR.PATCH");
        }
        Ok(Self { core: parts, pre })
    }
}

/// Digits without a leading zero (except `0` itself).
fn numeric_ok(part: &str) -> bool {
    !part.is_empty()
        && part.bytes().all(|byte| byte.is_ascii_digit())
        && (part == "0" || !part.starts_with('0'))
}

/// Dot-separated non-empty `[0-9A-Za-z-]` identifiers; numeric pre-release identifiers
/// have no leading zero.
fn identifiers_ok(text: &str, pre: bool) -> bool {
    text.split('.').all(|id| {
        !id.is_empty()
            && id
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-')
            && !(pre && id.bytes().all(|byte| byte.is_ascii_digit()) && !numeric_ok(id))
    })
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        self.core
            .cmp(&other.core)
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => compare_pre(&self.pre, &other.pre),
            })
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

fn compare_pre(left: &[String], right: &[String]) -> Ordering {
    for (a, b) in left.iter().zip(right) {
        let ordering = match (a.parse::<u64>(), b.parse::<u64>()) {
            (Ok(a), Ok(b)) => a.cmp(&b),
            (Ok(_), Err(_)) => Ordering::Less,
            (Err(_), Ok(_)) => Ordering::Greater,
            (Err(_), Err(_)) => a.cmp(b),
        };
        if ordering != Ordering::Equal {
            return ordering;
        }
    }
    left.len().cmp(&right.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    #[test]
    fn parses_valid_versions() {
        for text in [
            "0.1.0",
            "1.2.3",
            "10.20.30-rc.1",
            "1.0.0-alpha+build.5",
            "1.0.0+x",
        ] {
            assert!(Version::parse(text).is_ok(), "{text}");
        }
    }

    #[test]
    fn rejects_invalid_versions() {
        for text in [
            "1.2", "1.2.3.4", "v1.2.3", "01.2.3", "1.2.3-", "1.2.3-01", "1.2.3+", "", "1..3",
        ] {
            assert!(Version::parse(text).is_err(), "{text}");
        }
    }

    #[test]
    fn precedence_follows_semver() {
        let ordered = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
            "1.0.1",
            "1.10.0",
        ];
        for pair in ordered.windows(2) {
            assert!(v(pair[0]) < v(pair[1]), "{} < {}", pair[0], pair[1]);
        }
        assert_eq!(v("1.0.0+a").cmp(&v("1.0.0+b")), Ordering::Equal);
    }
}
