//! Failure kinds: `expect = "..."`.

/// The failure kinds, as `expect = "..."` lists them.
pub const FAILURE_KINDS_EXPECTED: &str =
    "\"panic\", \"deadlock\", \"data race\", \"livelock\", \"leak\", \"use after free\" or \"nondeterminism\"";

/// A failure kind a test can expect: the user-visible kinds of
/// `kase::FailureKind` (not `Internal`, a bug in kase), by the name its
/// `Display` gives them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FailureKindName {
    /// `"panic"`.
    Panic,
    /// `"deadlock"`.
    Deadlock,
    /// `"data race"`.
    DataRace,
    /// `"livelock"`.
    Livelock,
    /// `"leak"`.
    Leak,
    /// `"use after free"`.
    UseAfterFree,
    /// `"nondeterminism"`.
    Nondeterminism,
}

impl FailureKindName {
    /// Every kind, in the order of [`FAILURE_KINDS_EXPECTED`].
    pub const ALL: [FailureKindName; 7] = [
        FailureKindName::Panic,
        FailureKindName::Deadlock,
        FailureKindName::DataRace,
        FailureKindName::Livelock,
        FailureKindName::Leak,
        FailureKindName::UseAfterFree,
        FailureKindName::Nondeterminism,
    ];

    /// The kind named exactly `name` (lower case, `data race` with a
    /// space), if any.
    ///
    /// ```
    /// use kase_grammar::FailureKindName;
    /// assert_eq!(FailureKindName::parse("data race"), Some(FailureKindName::DataRace));
    /// assert_eq!(FailureKindName::parse("datarace"), None);
    /// ```
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The name users write (and `kase::FailureKind`'s `Display`).
    pub fn name(self) -> &'static str {
        match self {
            FailureKindName::Panic => "panic",
            FailureKindName::Deadlock => "deadlock",
            FailureKindName::DataRace => "data race",
            FailureKindName::Livelock => "livelock",
            FailureKindName::Leak => "leak",
            FailureKindName::UseAfterFree => "use after free",
            FailureKindName::Nondeterminism => "nondeterminism",
        }
    }

    /// The `kase::FailureKind` variant it names.
    pub fn variant(self) -> &'static str {
        match self {
            FailureKindName::Panic => "Panic",
            FailureKindName::Deadlock => "Deadlock",
            FailureKindName::DataRace => "DataRace",
            FailureKindName::Livelock => "Livelock",
            FailureKindName::Leak => "Leak",
            FailureKindName::UseAfterFree => "UseAfterFree",
            FailureKindName::Nondeterminism => "Nondeterminism",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_all_listed() {
        for kind in FailureKindName::ALL {
            assert_eq!(FailureKindName::parse(kind.name()), Some(kind));
            assert!(FAILURE_KINDS_EXPECTED.contains(&format!("\"{}\"", kind.name())));
        }
        assert_eq!(FAILURE_KINDS_EXPECTED.matches('"').count(), 2 * 7);
        for wrong in ["crash", "datarace", "Panic", " panic", "internal error", ""] {
            assert_eq!(FailureKindName::parse(wrong), None, "{wrong:?}");
        }
    }
}
