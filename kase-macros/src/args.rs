//! The arguments of `#[kase::test(...)]` and `#[kase::instrument(...)]`,
//! parsed with spans. Every problem becomes a `syn::Error` pointing at the
//! offending key or literal; parsing goes on after an error so that all of
//! them are reported at once. Nothing is read from the environment here.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, Meta, Token};

use kase_grammar::{FailureKindName, DURATION_EXPECTED, FAILURE_KINDS_EXPECTED};

/// The keys `#[kase::test]` accepts, in the order the error message lists them.
pub(crate) const TEST_KEYS: &[&str] = &[
    "strategy",
    "alternatives",
    "peeking",
    "memory_model",
    "max_executions",
    "max_duration",
    "preemption_bound",
    "unbounded_trial",
    "allow_incomplete",
    "max_steps",
    "stack_size",
    "replay",
    "persist",
    "expect",
    "crate",
];

/// The keys `#[kase::instrument]` accepts.
pub(crate) const INSTRUMENT_KEYS: &[&str] = &["crate"];

/// Parsed arguments. `setters` are the `Builder` calls to make, in source
/// order, already spanned at their keys; `crate_path` is where kase lives.
pub(crate) struct Args {
    pub(crate) crate_path: syn::Path,
    setters: Vec<(Span, Setter)>,
    pub(crate) expect: Option<(Span, FailureKindName)>,
    /// `persist = bool`, if given.
    pub(crate) persist: Option<(Span, bool)>,
}

enum Setter {
    Strategy(&'static str),
    Alternatives(Option<u64>),
    MaxExecutions(u64),
    PreemptionBound(u64),
    UnboundedTrial(u64),
    MaxDuration { secs: u64, nanos: u32 },
    MaxSteps(u64),
    StackSize(u64),
    Replay(syn::LitStr),
    Peeking(bool),
    MemoryModel(&'static str),
    AllowIncomplete(bool),
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
                Setter::PreemptionBound(n) => {
                    let n = k_usize(*n, span);
                    quote_spanned!(span=> .preemption_bound(#n))
                }
                Setter::UnboundedTrial(n) => quote_spanned!(span=> .unbounded_trial(#n)),
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
                Setter::MemoryModel(v) => {
                    let v = syn::Ident::new(v, span);
                    quote_spanned!(span=> .memory_model(#krate::MemoryModel::#v))
                }
                Setter::AllowIncomplete(on) => quote_spanned!(span=> .allow_incomplete(#on)),
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
        "memory_model" => {
            let s = string(value, "\"rc11\" or \"sc\"")?;
            match s.value().as_str() {
                "rc11" => Setter::MemoryModel("Rc11"),
                "sc" => Setter::MemoryModel("SequentiallyConsistent"),
                other => {
                    return Err(syn::Error::new(
                        s.span(),
                        format!(
                            "unknown memory model \"{other}\"; expected \"rc11\" (Rust's memory \
                             model) or \"sc\" (sequential consistency)"
                        ),
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
        "allow_incomplete" => match lit(value) {
            Some(Lit::Bool(b)) => Setter::AllowIncomplete(b.value),
            _ => return Err(syn::Error::new(value.span(), "expected `true` or `false`")),
        },
        "max_executions" => Setter::MaxExecutions(int(value, "u64")?),
        "preemption_bound" => Setter::PreemptionBound(int(value, "usize")?),
        "unbounded_trial" => Setter::UnboundedTrial(int(value, "u64")?),
        "max_steps" => Setter::MaxSteps(int(value, "u64")?),
        "stack_size" => {
            let n = int(value, "usize")?;
            Setter::StackSize(n)
        }
        "max_duration" => {
            let s = string(
                value,
                "a duration such as \"30s\", \"500ms\", \"1.5s\" or \"2m\"",
            )?;
            let d = kase_grammar::duration(&s.value()).map_err(|why| {
                syn::Error::new(
                    s.span(),
                    format!(
                        "invalid duration \"{}\": {why}; expected {DURATION_EXPECTED}",
                        s.value()
                    ),
                )
            })?;
            Setter::MaxDuration {
                secs: d.as_secs(),
                nanos: d.subsec_nanos(),
            }
        }
        "replay" => {
            let s = string(
                value,
                "a schedule string from a kase report (\"kase1 ...\")",
            )?;
            if let Err(why) = kase_grammar::schedule(&s.value()) {
                return Err(syn::Error::new(s.span(), why));
            }
            Setter::Replay(s)
        }
        "expect" => {
            let s = string(value, "a failure kind such as \"panic\" or \"deadlock\"")?;
            let Some(expect) = FailureKindName::parse(&s.value()) else {
                return Err(syn::Error::new(
                    s.span(),
                    format!(
                        "unknown failure kind \"{}\"; expected {FAILURE_KINDS_EXPECTED}",
                        s.value()
                    ),
                ));
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

#[cfg(test)]
mod tests {
    use proc_macro2::TokenStream;

    fn builder_of(args: &str) -> Result<String, String> {
        let tokens: TokenStream = args.parse().unwrap();
        match super::parse(tokens, super::TEST_KEYS, "kase::test") {
            (args, None) => Ok(args.builder().to_string().replace(' ', "")),
            (_, Some(e)) => Err(e.to_string()),
        }
    }

    #[test]
    fn durations_use_the_shared_grammar() {
        for (text, call) in [
            ("30s", "Duration::new(30u64,0u32)"),
            ("1.5s", "Duration::new(1u64,500000000u32)"),
            ("2min", "Duration::new(120u64,0u32)"),
            ("30", "Duration::new(30u64,0u32)"),
            ("7us", "Duration::new(0u64,7000u32)"),
        ] {
            let builder = builder_of(&format!("max_duration = {text:?}")).unwrap();
            assert!(builder.ends_with(&format!("{call})")), "{text}: {builder}");
        }
        let e = builder_of("max_duration = \"30 sec\"").unwrap_err();
        assert!(e.contains("unknown unit"), "{e}");
    }

    #[test]
    fn schedules_and_failure_kinds_use_the_shared_grammar() {
        assert!(builder_of("replay = \"kase1p:0.1\"").is_ok());
        let e = builder_of("replay = \"kase1:1..0\"").unwrap_err();
        assert!(e.contains("choice 2 is empty"), "{e}");
        assert!(builder_of("expect = \"data race\"").is_ok());
        let e = builder_of("expect = \"datarace\"").unwrap_err();
        assert!(e.contains("unknown failure kind"), "{e}");
    }

    #[test]
    fn memory_model_becomes_a_builder_call() {
        for (value, variant) in [("rc11", "Rc11"), ("sc", "SequentiallyConsistent")] {
            let builder = builder_of(&format!("memory_model = \"{value}\"")).unwrap();
            assert!(
                builder.ends_with(&format!(".memory_model(::kase::MemoryModel::{variant})")),
                "{builder}"
            );
        }
        let e = builder_of("memory_model = \"tso\"").unwrap_err();
        assert!(e.contains("unknown memory model \"tso\""), "{e}");
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
