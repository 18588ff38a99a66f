//! Procedural macros of kase (the `kase` crate of its repository, not the
//! unrelated crates.io package of that name): `#[kase::test]` and
//! `#[kase::instrument]`. Use them through the `kase` crate, which documents
//! them in full.

mod args;
mod rewrite;
mod statics;
mod uninstrumented;

use proc_macro::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{parse_macro_input, Item, ItemFn, ReturnType};

use rewrite::Rewriter;

/// Model-checks a test written against `std`: runs a zero-argument test
/// function once per interleaving behaviour of its body, and fails with
/// kase's report (interleaving, source locations, replayable schedule) if
/// one of them panics, deadlocks, races on data, leaks a thread, livelocks
/// or is nondeterministic.
///
/// ```
/// # // `#[test]` functions are compiled only by `cargo test`, so as a
/// # // doctest this checks that the attribute accepts the function and
/// # // expands without errors; tests/attribute_rewrite.rs runs such tests.
/// use std::sync::{Arc, Mutex};
/// use std::thread;
///
/// #[kase::test]
/// fn two_increments() {
///     let counter = Arc::new(Mutex::new(0));
///     let c = counter.clone();
///     let t = thread::spawn(move || *c.lock().unwrap() += 1);
///     *counter.lock().unwrap() += 1;
///     t.join().unwrap();
///     assert_eq!(*counter.lock().unwrap(), 2);
/// }
/// ```
///
/// # What it generates
///
/// The function keeps its signature, attributes and docs; `#[test]` is added
/// unless a `test`, `rstest` or `test_case` attribute is already there. The
/// body becomes a closure run by `kase::Builder::new()` (which reads the
/// `KASE_*` variables at run time) with the arguments below applied on top,
/// then `.check(...)`: a failing execution re-raises the original panic
/// payload, so `#[should_panic(expected = "...")]` matches the model's own
/// message.
///
/// # Rewriting
///
/// Inside the body, every path starting with `std::sync`, `core::sync`,
/// `alloc::sync`, `std::thread`, `std::hint::spin_loop` or
/// `std::cell::UnsafeCell` (with or without a leading `::`) is re-rooted
/// under kase (`std::sync::Mutex` → `::kase::sync::Mutex`): in expressions,
/// types and patterns, in `use` declarations (a tree mixing std and other
/// paths is split), in nested closures, blocks and items, and in macro
/// invocations (`assert!`, `vec!`, `format!`, ...: their tokens are parsed
/// as expressions or statements, or else rewritten token-wise). Types keep
/// their generic arguments (`std::cell::UnsafeCell<T>` becomes kase's cell
/// in a `let`, a field, a signature or a turbofish), and an alias declared
/// in the body (`use std::sync as s;`) is kase's module; `use std::cell as
/// c;` or `use std::hint;` binds a module of std's items with kase's on top.
/// An alias declared outside the body cannot be seen: a body path that
/// looks like one (`s::Mutex`, `s` not declared in the body) gets a
/// compile-time note (a `deprecated` warning) instead of passing silently. Every std
/// item under those paths has a kase counterpart (deprecated ones such as
/// `ATOMIC_USIZE_INIT` or `sleep_ms` included); one that did not would fail
/// to compile instead of silently running uninstrumented.
///
/// Names the body uses without a path (`Mutex::new`, `thread::spawn`,
/// `AtomicUsize`, `fence`, ...) usually come from module-level imports
/// (`use std::sync::Mutex;`) that the macro cannot see or change; they are
/// shadowed by body-level imports of the shims (only for names the body
/// uses and does not define itself, and not at all if the body has a glob
/// `use`). The module-level import still counts as used. Names shadowed:
/// `Arc`, `Weak`, `Mutex`, `MutexGuard`, `RwLock`, `RwLockReadGuard`,
/// `RwLockWriteGuard`, `Condvar`, `WaitTimeoutResult`, `UnsafeCell`,
/// `Barrier`, `Once`, `OnceLock`, `LazyLock`, `mpsc`, `atomic`, the atomic
/// types, `fence`, `thread`, `spin_loop`. `Ordering` and the lock result types are
/// std's own in kase too. `thread_local!` and `std::thread_local!` become
/// `kase::thread_local!`: each model thread gets its own value, dropped when
/// the thread's closure returns.
///
/// A body naming `parking_lot`, `crossbeam`, `crossbeam_channel`,
/// `crossbeam_utils` or `tokio` gets a compile-time `deprecated` warning on
/// that name: kase cannot see those operations.
///
/// A `#[test]` written *above* `#[kase::test]` is removed by rustc before
/// the attribute runs, so the test gets a second `#[test]` (two runs under
/// one name): write `#[kase::test]` alone or above `#[test]`.
///
/// # Arguments
///
/// `#[kase::test(key = value, ...)]`, all optional; an unknown or duplicate
/// key, or a bad value, is a compile error pointing at it (the function is
/// still emitted so the IDE keeps working). Nothing is read from the
/// environment when the macro expands.
///
/// | key | value | `Builder` call |
/// |---|---|---|
/// | `strategy` | `"por"` \| `"exhaustive"` | `.strategy(Strategy::Por \| Exhaustive)` |
/// | `alternatives` | `"optimal"` \| integer k ≥ 1 | `.alternatives(Optimal \| KPartial(k))` |
/// | `max_executions` | integer | `.max_executions(n)` |
/// | `max_duration` | `"30s"`, `"500ms"`, `"1.5s"`, `"2m"`, `"2min"`, `"30"` (units ns, us, ms, s, m or min, h; none: seconds; the grammar of `KASE_MAX_DURATION`) | `.max_duration(d)` |
/// | `preemption_bound` | integer | `.preemption_bound(n)`: only executions with at most n preemptions |
/// | `unbounded_trial` | integer | `.unbounded_trial(n)`: executions first spent without the preemption bound (0: none) |
/// | `allow_incomplete` | `bool` (default `false`) | `.allow_incomplete(…)`: pass when a budget stopped the exploration early |
/// | `max_steps` | integer | `.max_steps(n)` |
/// | `stack_size` | integer (bytes) | `.stack_size(n)` |
/// | `replay` | `"kase1:..."` from a report | `.replay(s)` |
/// | `expect` | `"panic"` \| `"deadlock"` \| `"data race"` \| `"livelock"` \| `"leak"` \| `"use after free"` \| `"nondeterminism"` | see below |
/// | `persist` | `bool` (default `true`) | `false`: `.persist(Persist::Off)` |
/// | `crate` | `"path"` to kase, for a renamed dependency (default `::kase`) | |
/// | `peeking` | `bool` (default `true`) | `.peeking(…)`: critical-section peeking |
/// | `memory_model` | `"sc"` (default) or `"rc11"` | `.memory_model(…)`: Rust's memory model for atomics |
///
/// A `replay` schedule is checked for its shape at expansion (a typo is a
/// compile error).
/// `expect = "kind"` inverts the test: it runs `.explore(...)` and passes
/// only if kase found a failure of that kind, failing with the report
/// otherwise. The kinds: `"panic"`, `"deadlock"`, `"data race"`,
/// `"livelock"`, `"leak"`, `"use after free"`, `"nondeterminism"`.
///
/// # Regression files
///
/// The generated code tells the `Builder` the test's module path, name,
/// crate directory and package (`module_path!()`, the function's name and
/// `CARGO_MANIFEST_DIR` / `CARGO_PKG_NAME` of the crate being compiled). A
/// failure is then appended to `<crate>/kase-regressions/<module path>.txt`
/// (meant to be checked in) and the report ends with a copy-paste `cargo
/// test` command that replays it; every later run replays the test's saved
/// schedules before exploring. `KASE_PERSIST` and `KASE_REGRESSIONS_DIR`
/// apply at run time. Tests that expect a failure (`expect = "..."` or
/// `#[should_panic]`) do not save theirs unless `persist = true` is given;
/// `persist = false` turns both saving and replaying off.
///
/// # Bodies returning `Result`
///
/// A function returning `Result<(), E>` with `E: Debug` is supported: the
/// body runs in a closure of that type (so `?` and `return` keep their
/// meaning), and an `Err(e)` panics inside that execution with `{e:?}`, so
/// kase reports it like any failing execution (with its interleaving and
/// schedule); the test function itself returns `Ok(())` if the model
/// passes. (`#[should_panic]` cannot be combined with a `Result` return, as
/// with plain `#[test]`; use `expect = "panic"`.)
///
/// # Parametrised tests
///
/// Above test-case's `#[test_case(…)]` or rstest's `#[rstest]`, the
/// function may take parameters: kase wraps its body (the model captures
/// the arguments) and that attribute generates one test per case. Below
/// them, kase would only see the generated wrappers.
///
/// # Errors
///
/// `async fn` (not supported yet), parameters (unless a parametrising
/// attribute follows), generics and `self` are compile errors.
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    let (args, arg_errors) = args::parse(args.into(), args::TEST_KEYS, "kase::test");
    let function = parse_macro_input!(item as ItemFn);
    let arg_errors = arg_errors.map(|e| e.to_compile_error());
    if let Some(e) = signature_errors(&function) {
        // Emit the function as written (not as a test) so that the only
        // errors are ours and the IDE still sees the item.
        let e = e.to_compile_error();
        return quote!(#arg_errors #e #[allow(dead_code)] #function).into();
    }
    let mut notes = uninstrumented::notes(|m| m.visit_block(&function.block));
    notes.extend(uninstrumented::AliasSuspects::notes(&function.block));
    let function = expand_test(&args, function);
    quote!(#arg_errors #notes #function).into()
}

/// Rewrites `std` paths onto kase's shims in code under test that lives
/// outside a `#[kase::test]` body, in the same crate; it runs nothing under
/// the model by itself. Typically `#[cfg_attr(test, kase::instrument)]`.
///
/// ```
/// #[kase::instrument]
/// mod counter {
///     use std::sync::atomic::{AtomicUsize, Ordering};
///
///     #[derive(Default)]
///     pub struct Counter(AtomicUsize);
///
///     impl Counter {
///         pub fn increment(&self) {
///             let v = self.0.load(Ordering::SeqCst);
///             self.0.store(v + 1, Ordering::SeqCst);
///         }
///
///         pub fn get(&self) -> usize {
///             self.0.load(Ordering::SeqCst)
///         }
///     }
/// }
///
/// // The module now uses kase's atomics, so kase sees its operations and
/// // finds the lost update (a test would use `#[kase::test(expect = "panic")]`).
/// let report = kase::Builder::new().explore(|| {
///     let counter = std::sync::Arc::new(counter::Counter::default());
///     let c = counter.clone();
///     let t = kase::thread::spawn(move || c.increment());
///     counter.increment();
///     t.join().unwrap();
///     assert_eq!(counter.get(), 2, "an increment was lost");
/// });
/// assert_eq!(report.failure().unwrap().kind(), kase::FailureKind::Panic);
/// ```
///
/// Applies to an inline `mod` (its `use` declarations and every path in it
/// are rewritten), an `impl` block or a `fn` (paths in the signatures and
/// bodies are rewritten, and the bodies shadow module-level imports as
/// `#[kase::test]` does). A type defined outside the instrumented item keeps
/// the field types it was written with, so instrument the module that
/// defines it. The only argument is `crate = "path"`.
#[proc_macro_attribute]
pub fn instrument(args: TokenStream, item: TokenStream) -> TokenStream {
    let (args, arg_errors) = args::parse(args.into(), args::INSTRUMENT_KEYS, "kase::instrument");
    let arg_errors = arg_errors.map(|e| e.to_compile_error());
    let mut item = parse_macro_input!(item as Item);
    let notes = uninstrumented::notes(|m| m.visit_item(&item));
    let scope = match &item {
        Item::Mod(_) => statics::Scope::Module,
        _ => statics::Scope::Body,
    };
    let mut rewriter = Rewriter {
        krate: args.crate_path.clone(),
        bare_locks: statics::bare_lock_names(scope, |names| names.visit_item(&item)),
    };
    let error = match &mut item {
        Item::Fn(f) => {
            rewriter.visit_signature_mut(&mut f.sig);
            instrument_fn_body(&mut rewriter, &mut f.block);
            None
        }
        Item::Impl(imp) => {
            rewriter.visit_generics_mut(&mut imp.generics);
            if let Some((_, path, _)) = &mut imp.trait_ {
                rewriter.visit_path_mut(path);
            }
            rewriter.visit_type_mut(&mut imp.self_ty);
            for impl_item in &mut imp.items {
                if let syn::ImplItem::Fn(f) = impl_item {
                    rewriter.visit_signature_mut(&mut f.sig);
                    instrument_fn_body(&mut rewriter, &mut f.block);
                } else {
                    rewriter.visit_impl_item_mut(impl_item);
                }
            }
            None
        }
        Item::Mod(m) if m.content.is_some() => {
            rewriter.visit_item_mod_mut(m);
            None
        }
        Item::Mod(m) => Some(syn::Error::new(
            m.semi.span(),
            "#[kase::instrument] needs an inline module (`mod name { ... }`): \
             it cannot see into a module in another file",
        )),
        other => Some(syn::Error::new(
            other.span(),
            "#[kase::instrument] applies to an inline `mod`, an `impl` block or a `fn`",
        )),
    };
    let error = error.map(|e| e.to_compile_error());
    quote!(#arg_errors #error #notes #item).into()
}

/// Rewrites a function body and puts the shadowing imports in front of it.
fn instrument_fn_body(rewriter: &mut Rewriter, block: &mut syn::Block) {
    rewriter.visit_block_mut(block);
    let (keep, shadow) = rewrite::shadowing_imports(&rewriter.krate, block);
    *block = syn::parse_quote!({ #keep { #shadow #block } });
}

/// Whether an attribute is one that makes the function a test already.
fn is_test_attribute(attr: &syn::Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|s| s.ident == "test" || s.ident == "rstest" || s.ident == "test_case")
}

/// Whether an attribute generates one test per case of a parametrised
/// function (test-case's `#[test_case(…)]`, rstest's `#[rstest]`). Below
/// `#[kase::test]`, such an attribute sees the function kase expanded, so
/// every case it generates runs the model with its own arguments.
fn is_parametrising_attribute(attr: &syn::Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|s| s.ident == "rstest" || s.ident == "test_case")
}

fn signature_errors(function: &ItemFn) -> Option<syn::Error> {
    let sig = &function.sig;
    let mut errors: Vec<syn::Error> = Vec::new();
    if let Some(a) = &sig.asyncness {
        errors.push(syn::Error::new(
            a.span(),
            "#[kase::test] does not support `async fn` yet: \
             write a synchronous test (kase models threads, not futures)",
        ));
    }
    if let Some(receiver) = sig.receiver() {
        errors.push(syn::Error::new_spanned(
            receiver,
            "#[kase::test] cannot be used on a method: it takes `self`",
        ));
    } else if !sig.inputs.is_empty() && !function.attrs.iter().any(is_parametrising_attribute) {
        errors.push(syn::Error::new_spanned(
            &sig.inputs,
            "#[kase::test] functions take no parameters: build the inputs inside the body, \
             or put #[kase::test] above #[test_case(…)] or #[rstest] to model-check each case",
        ));
    }
    if !sig.generics.params.is_empty() {
        errors.push(syn::Error::new_spanned(
            &sig.generics,
            "#[kase::test] functions cannot be generic",
        ));
    }
    errors.into_iter().reduce(|mut all, e| {
        all.combine(e);
        all
    })
}

/// The test function: the same signature and attributes, `#[test]` added if
/// missing, the body rewritten and run as a model.
fn expand_test(args: &args::Args, mut function: ItemFn) -> ItemFn {
    let krate = &args.crate_path;
    let mut body = (*function.block).clone();
    Rewriter {
        krate: krate.clone(),
        bare_locks: statics::bare_lock_names(statics::Scope::Body, |names| {
            names.visit_block(&function.block)
        }),
    }
    .visit_block_mut(&mut body);
    let (keep, shadow) = rewrite::shadowing_imports(krate, &body);
    let body = quote!({ #keep { #shadow #body } });
    // The model is a closure running the body. A body with a return type
    // (`Result<(), E>`) runs in an inner closure of that type, so `?` and
    // `return` keep their meaning; an `Err` panics with `{e:?}` inside the
    // execution, so kase reports it like any other failing execution (with
    // its interleaving and schedule) and `#[should_panic]` can match it.
    let (model, success) = match &function.sig.output {
        ReturnType::Default => (quote!(|| #body), quote!()),
        ReturnType::Type(_, ty) => (
            quote!(|| {
                let __kase_result: #ty = (|| -> #ty #body)();
                #krate::__private::TestResult::fail_on_err(__kase_result);
            }),
            quote!(#krate::__private::TestResult::success()),
        ),
    };
    let builder = args.builder();
    // The test's identity: its regression file and replay command. Expected
    // failures (`expect`, `#[should_panic]`) are not saved unless asked.
    let name = function.sig.ident.to_string();
    let expected_failure = args.expect.is_some()
        || function
            .attrs
            .iter()
            .any(|a| a.path().is_ident("should_panic"));
    let persist_off = match args.persist {
        Some((span, false)) => Some(quote::quote_spanned!(span=> .persist(#krate::Persist::Off))),
        Some((_, true)) => None,
        None if expected_failure => Some(quote!(.persist(#krate::Persist::Off))),
        None => None,
    };
    let builder = quote!(
        #builder
            .__kase_test(
                ::core::module_path!(),
                #name,
                ::core::option_env!("CARGO_MANIFEST_DIR"),
                ::core::option_env!("CARGO_PKG_NAME"),
            )
            #persist_off
    );
    let run = match args.expect {
        None => quote!(#builder.check(#model);),
        Some((span, expect)) => {
            let variant = syn::Ident::new(expect.variant(), span);
            let name = expect.name();
            quote!(
                let __kase_report = #builder.explore(#model);
                #krate::__private::expect(&__kase_report, #krate::FailureKind::#variant, #name);
            )
        }
    };
    *function.block = syn::parse_quote!({ #run #success });
    if !function.attrs.iter().any(is_test_attribute) {
        function
            .attrs
            .insert(0, syn::parse_quote!(#[::core::prelude::v1::test]));
    }
    function
}
