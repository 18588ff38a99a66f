//! The arguments of `#[kase::test(...)]` and `#[kase::instrument(...)]`,
//! parsed with spans. Every problem becomes a `syn::Error` pointing at the
//! offending key or literal; parsing goes on after an error so that all of
//! them are reported at once. Nothing is read from the environment here.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, Meta, Token};

/// The keys `#[kase::test]` accepts, in the order the error message lists them.
pub(crate) const TEST_KEYS: &[&str] = &[
    "strategy",
    "alternatives",
    "peeking",
    "max_executions",
    "max_duration",
    "max_steps",
    "stack_size",
    "replay",
    "persist",
    "expect",
    "crate",
];

/// The keys `#[kase::instrument]` accepts.
pub(crate) const INSTRUMENT_KEYS: &[&str] = &["crate"];

/// A failure kind `expect = "..."` can name, as the variant of
/// `kase::FailureKind` it checks for.
#[derive(Clone, Copy)]
pub(crate) enum Expect {
    Panic,
    Deadlock,
    Livelock,
    Nondeterminism,
    DataRace,
    Leak,
}

impl Expect {
    pub(crate) fn variant(self) -> &'static str {
        match self {
            Expect::Panic => "Panic",
            Expect::Deadlock => "Deadlock",
            Expect::Livelock => "Livelock",
            Expect::Nondeterminism => "Nondeterminism",
            Expect::DataRace => "DataRace",
            Expect::Leak => "Leak",
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Expect::Panic => "panic",
            Expect::Deadlock => "deadlock",
            Expect::Livelock => "livelock",
            Expect::Nondeterminism => "nondeterminism",
            Expect::DataRace => "data race",
            Expect::Leak => "leak",
        }
    }
}

/// Parsed arguments. `setters` are the `Builder` calls to make, in source
/// order, already spanned at their keys; `crate_path` is where kase lives.
pub(crate) struct Args {
    pub(crate) crate_path: syn::Path,
    setters: Vec<(Span, Setter)>,
    pub(crate) expect: Option<(Span, Expect)>,
    /// `persist = bool`, if given.
    pub(crate) persist: Option<(Span, bool)>,
}

enum Setter {
    Strategy(&'static str),
    Alternatives(Option<u64>),
    MaxExecutions(u64),
    MaxDuration { secs: u64, nanos: u32 },
    MaxSteps(u64),
    StackSize(u64),
    Replay(syn::LitStr),
    Peeking(bool),
}

impl Args {
    fn empty() -> Self {
        Args {
            crate_path: syn::parse_quote!(::kase),
            setters: Vec::new(),
            expect: None,
            persist: None,
        }
    }

    /// `<crate>::Builder::new().strategy(...)...`, with the crate path given.
    pub(crate) fn builder(&self) -> TokenStream {
        let krate = &self.crate_path;
        let calls = self.setters.iter().map(|(span, setter)| {
            let span = *span;
            match setter {
                Setter::Strategy(v) => {
                    let v = syn::Ident::new(v, span);
                    quote_spanned!(span=> .strategy(#krate::Strategy::#v))
                }
                Setter::Alternatives(None) => {
                    quote_spanned!(span=> .alternatives(#krate::Alternatives::Optimal))
                }
                Setter::Alternatives(Some(k)) => {
                    let k = k_usize(*k, span);
                    quote_spanned!(span=> .alternatives(#krate::Alternatives::KPartial(#k)))
                }
                Setter::MaxExecutions(n) => quote_spanned!(span=> .max_executions(#n)),
                Setter::MaxDuration { secs, nanos } => quote_spanned!(span=>
                    .max_duration(::core::time::Duration::new(#secs, #nanos))
                ),
                Setter::MaxSteps(n) => quote_spanned!(span=> .max_steps(#n)),
                Setter::StackSize(n) => {
                    let n = k_usize(*n, span);
                    quote_spanned!(span=> .stack_size(#n))
                }
                Setter::Replay(s) => quote_spanned!(span=> .replay(#s)),
                Setter::Peeking(on) => quote_spanned!(span=> .peeking(#on)),
            }
        });
        quote!(#krate::Builder::new() #(#calls)*)
    }
}

fn k_usize(n: u64, span: Span) -> syn::LitInt {
    syn::LitInt::new(&format!("{n}usize"), span)
}

/// Parses the attribute's arguments, accepting only `keys`. Returns the
/// arguments understood (the defaults for anything wrong) and the errors.
pub(crate) fn parse(
    tokens: TokenStream,
    keys: &[&str],
    attribute: &str,
) -> (Args, Option<syn::Error>) {
    let mut args = Args::empty();
    let mut errors = Errors::default();
    if tokens.is_empty() {
        return (args, None);
    }
    let parser = Punctuated::<Meta, Token![,]>::parse_terminated;
    let metas = match syn::parse::Parser::parse2(parser, tokens) {
        Ok(metas) => metas,
        Err(e) => return (args, Some(e)),
    };
    let mut seen: Vec<(String, Span)> = Vec::new();
    for meta in metas {
        let nv = match meta {
            Meta::NameValue(nv) => nv,
            other => {
                errors.push(syn::Error::new(
                    other.span(),
                    format!(
                        "expected `key = value` in #[{attribute}(...)]; valid keys: {}",
                        list(keys)
                    ),
                ));
                continue;
            }
        };
        let key = nv
            .path
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_else(|| quote!(#nv.path).to_string());
        let key_span = nv.path.span();
        if !keys.contains(&key.as_str()) {
            let hint = suggest(&key, keys)
                .map(|k| format!("did you mean `{k}`? "))
                .unwrap_or_default();
            errors.push(syn::Error::new(
                key_span,
                format!(
                    "unknown argument `{key}` of #[{attribute}]; {hint}valid keys: {}",
                    list(keys)
                ),
            ));
            continue;
        }
        if let Some((_, first)) = seen.iter().find(|(k, _)| *k == key) {
            let mut e = syn::Error::new(key_span, format!("duplicate argument `{key}`"));
            e.combine(syn::Error::new(*first, format!("`{key}` first given here")));
            errors.push(e);
            continue;
        }
        seen.push((key.clone(), key_span));
        if let Err(e) = apply(&mut args, &key, key_span, &nv.value) {
            errors.push(e);
        }
    }
    (args, errors.0)
}

#[derive(Default)]
struct Errors(Option<syn::Error>);

impl Errors {
    fn push(&mut self, e: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }
}

/// The valid key closest to a misspelt one, if it is close (edit distance
/// at most 2).
fn suggest<'k>(key: &str, keys: &[&'k str]) -> Option<&'k str> {
    keys.iter()
        .map(|k| (edit_distance(key, k), *k))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut row = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitute = prev[j] + usize::from(ca != *cb);
            row.push(substitute.min(prev[j + 1] + 1).min(row[j] + 1));
        }
        prev = row;
    }
    prev[b.len()]
}

fn list(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn apply(args: &mut Args, key: &str, key_span: Span, value: &Expr) -> syn::Result<()> {
    let setter = match key {
        "strategy" => {
            let s = string(value, "\"por\" or \"exhaustive\"")?;
            match s.value().as_str() {
                "por" => Setter::Strategy("Por"),
                "exhaustive" => Setter::Strategy("Exhaustive"),
                other => {
                    return Err(syn::Error::new(
                        s.span(),
                        format!("unknown strategy \"{other}\"; expected \"por\" or \"exhaustive\""),
                    ))
                }
            }
        }
        "alternatives" => match lit(value) {
            Some(Lit::Str(s)) if s.value() == "optimal" => Setter::Alternatives(None),
            Some(Lit::Int(i)) => {
                let k = int(value, "u64")?;
                if k == 0 {
                    return Err(syn::Error::new(
                        i.span(),
                        "k-partial alternatives need k >= 1",
                    ));
                }
                Setter::Alternatives(Some(k))
            }
            _ => {
                return Err(syn::Error::new(
                    value.span(),
                    "expected \"optimal\" or an integer k >= 1 (k-partial alternatives)",
                ))
            }
        },
        "persist" => {
            let b = match lit(value) {
                Some(Lit::Bool(b)) => b,
                _ => return Err(syn::Error::new(value.span(), "expected `true` or `false`")),
            };
            args.persist = Some((key_span, b.value));
            return Ok(());
        }
        "peeking" => match lit(value) {
            Some(Lit::Bool(b)) => Setter::Peeking(b.value),
            _ => return Err(syn::Error::new(value.span(), "expected `true` or `false`")),
        },
        "max_executions" => Setter::MaxExecutions(int(value, "u64")?),
        "max_steps" => Setter::MaxSteps(int(value, "u64")?),
        "stack_size" => {
            let n = int(value, "usize")?;
            Setter::StackSize(n)
        }
        "max_duration" => {
            let s = string(value, "a duration such as \"30s\", \"500ms\" or \"2m\"")?;
            let (secs, nanos) = parse_duration(&s.value()).map_err(|why| {
                syn::Error::new(
                    s.span(),
                    format!(
                        "invalid duration \"{}\": {why}; expected an integer and a unit \
                         (ns, us, ms, s, m, h), such as \"30s\", \"500ms\" or \"2m\"",
                        s.value()
                    ),
                )
            })?;
            Setter::MaxDuration { secs, nanos }
        }
        "replay" => {
            let s = string(
                value,
                "a schedule string from a kase report (\"kase1 ...\")",
            )?;
            if s.value().trim().is_empty() {
                return Err(syn::Error::new(s.span(), "the schedule is empty"));
            }
            if let Err(why) = check_schedule(&s.value()) {
                return Err(syn::Error::new(s.span(), why));
            }
            Setter::Replay(s)
        }
        "expect" => {
            let s = string(value, "a failure kind such as \"panic\" or \"deadlock\"")?;
            let expect = match s.value().as_str() {
                "panic" => Expect::Panic,
                "deadlock" => Expect::Deadlock,
                "livelock" => Expect::Livelock,
                "nondeterminism" => Expect::Nondeterminism,
                "data race" => Expect::DataRace,
                "leak" => Expect::Leak,
                other => {
                    return Err(syn::Error::new(
                        s.span(),
                        format!(
                            "unknown failure kind \"{other}\"; expected \"panic\", \"deadlock\", \
                             \"data race\", \"livelock\", \"leak\" or \"nondeterminism\""
                        ),
                    ))
                }
            };
            args.expect = Some((key_span, expect));
            return Ok(());
        }
        "crate" => {
            let s = string(value, "a path such as \"kase\" or \"::my_kase\"")?;
            let path: syn::Path = s.parse().map_err(|e| {
                syn::Error::new(
                    s.span(),
                    format!("`crate` must be a path such as \"kase\" or \"::my_kase\": {e}"),
                )
            })?;
            args.crate_path = path;
            return Ok(());
        }
        _ => unreachable!("checked against the list of keys"),
    };
    args.setters.push((key_span, setter));
    Ok(())
}

/// The shape of a `kase1:` schedule, checked at expansion so that a typo is
/// a compile error (the runtime parses it again and explains in more detail).
fn check_schedule(text: &str) -> Result<(), String> {
    let text = text.trim();
    // `kase1p:` was recorded with critical-section peeking.
    let Some(body) = text
        .strip_prefix("kase1:")
        .or_else(|| text.strip_prefix("kase1p:"))
    else {
        return Err(format!(
            "not a kase schedule: {text:?} does not start with \"kase1:\" or \"kase1p:\"; copy \
             the whole `kase1:…` string from the failure report"
        ));
    };
    if body.is_empty() {
        return Ok(());
    }
    for (i, part) in body.split('.').enumerate() {
        if part.is_empty()
            || !part.chars().all(|c| c.is_ascii_digit())
            || part.parse::<u32>().is_err()
        {
            return Err(format!(
                "bad schedule: choice {} is {part:?}; expected thread numbers separated by `.`, \
                 e.g. \"kase1:1.0.0\"",
                i + 1
            ));
        }
    }
    Ok(())
}

fn lit(value: &Expr) -> Option<&Lit> {
    match value {
        Expr::Lit(ExprLit { lit, .. }) => Some(lit),
        Expr::Group(g) => lit(&g.expr),
        _ => None,
    }
}

fn string(value: &Expr, expected: &str) -> syn::Result<syn::LitStr> {
    match lit(value) {
        Some(Lit::Str(s)) => Ok(s.clone()),
        _ => Err(syn::Error::new(
            value.span(),
            format!("expected a string literal: {expected}"),
        )),
    }
}

fn int(value: &Expr, ty: &str) -> syn::Result<u64> {
    match lit(value) {
        Some(Lit::Int(i)) => {
            if !i.suffix().is_empty() {
                return Err(syn::Error::new(
                    i.span(),
                    "write the integer without a suffix",
                ));
            }
            if i.base10_digits().starts_with('-') {
                return Err(syn::Error::new(
                    i.span(),
                    format!("expected a non-negative integer ({ty})"),
                ));
            }
            let n: u64 = i.base10_parse().map_err(|_| {
                syn::Error::new(i.span(), format!("too large: does not fit in a {ty}"))
            })?;
            if ty == "usize" && usize::try_from(n).is_err() {
                return Err(syn::Error::new(
                    i.span(),
                    "too large: does not fit in a usize",
                ));
            }
            Ok(n)
        }
        _ => Err(syn::Error::new(
            value.span(),
            format!("expected an integer literal ({ty})"),
        )),
    }
}

/// `"30s"` → (30, 0); `"500ms"` → (0, 500_000_000). Units: ns, us, ms, s,
/// m, h; the number is a non-negative integer (underscores allowed).
pub(crate) fn parse_duration(text: &str) -> Result<(u64, u32), &'static str> {
    let text = text.trim();
    if text.contains('.') {
        return Err("fractions are not supported (write \"1500ms\" for 1.5s)");
    }
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '_'))
        .ok_or("missing unit")?;
    let (digits, unit) = text.split_at(split);
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    if digits.is_empty() {
        return Err("missing number");
    }
    let n: u64 = digits.parse().map_err(|_| "number too large")?;
    let (secs, nanos) = match unit.trim() {
        "ns" => (n / 1_000_000_000, n % 1_000_000_000),
        "us" | "µs" => (n / 1_000_000, n % 1_000_000 * 1_000),
        "ms" => (n / 1_000, n % 1_000 * 1_000_000),
        "s" => (n, 0),
        "m" => (n.checked_mul(60).ok_or("too large")?, 0),
        "h" => (n.checked_mul(3600).ok_or("too large")?, 0),
        _ => return Err("unknown unit"),
    };
    Ok((secs, u32::try_from(nanos).expect("below one second")))
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use proc_macro2::TokenStream;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Ok((30, 0)));
        assert_eq!(parse_duration("500ms"), Ok((0, 500_000_000)));
        assert_eq!(parse_duration("1500ms"), Ok((1, 500_000_000)));
        assert_eq!(parse_duration("2m"), Ok((120, 0)));
        assert_eq!(parse_duration("1h"), Ok((3600, 0)));
        assert_eq!(parse_duration("7us"), Ok((0, 7_000)));
        assert_eq!(parse_duration("1_000ns"), Ok((0, 1_000)));
        assert!(parse_duration("30").is_err());
        assert!(parse_duration("s").is_err());
        assert!(parse_duration("1.5s").is_err());
        assert!(parse_duration("30 sec").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn schedules_are_checked() {
        assert!(super::check_schedule("kase1:1.0.0").is_ok());
        assert!(super::check_schedule("kase1:").is_ok());
        assert!(super::check_schedule("kase1p:0.1").is_ok());
        assert!(super::check_schedule("1.0.0").is_err());
        assert!(super::check_schedule("kase1:1..0").is_err());
        assert!(super::check_schedule("kase1:1.0.").is_err());
        assert!(super::check_schedule("kase1:1.x").is_err());
    }

    #[test]
    fn peeking_becomes_a_builder_call() {
        for on in [true, false] {
            let tokens: TokenStream = format!("peeking = {on}").parse().unwrap();
            let (args, error) = super::parse(tokens, super::TEST_KEYS, "kase::test");
            assert!(error.is_none());
            let builder = args.builder().to_string().replace(' ', "");
            assert!(builder.ends_with(&format!(".peeking({on})")), "{builder}");
        }
    }

    #[test]
    fn suggestions() {
        let keys = super::TEST_KEYS;
        assert_eq!(
            super::suggest("max_execution", keys),
            Some("max_executions")
        );
        assert_eq!(super::suggest("strategie", keys), Some("strategy"));
        assert_eq!(super::suggest("timeout", keys), None);
    }
}
