//! Procedural macros of [kase](https://docs.rs/kase): `#[kase::test]` and
//! `#[kase::instrument]`. Use them through the `kase` crate, which documents
//! them in full.

mod args;
mod rewrite;

use proc_macro::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{parse_macro_input, Item, ItemFn, ReturnType};

use rewrite::Rewriter;

/// Runs a zero-argument test function as a kase model: every interleaving
/// behaviour of its body is explored, and the test fails with kase's report
/// if one of them fails. `std::sync`, `std::thread`, `std::hint::spin_loop`,
/// `std::cell::UnsafeCell` and `core::sync` paths in the body are rewritten
/// onto kase's shims.
///
/// See the `kase` crate for the arguments and an example.
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
    let function = expand_test(&args, function);
    quote!(#arg_errors #function).into()
}

/// Rewrites `std::sync`, `std::thread`, `std::hint::spin_loop`,
/// `std::cell::UnsafeCell` and `core::sync` paths onto kase's shims, in an
/// inline `mod`, an `impl` block or a `fn`, without running anything under
/// the model: for code under test that lives outside the test body.
///
/// See the `kase` crate for details.
#[proc_macro_attribute]
pub fn instrument(args: TokenStream, item: TokenStream) -> TokenStream {
    let (args, arg_errors) = args::parse(args.into(), args::INSTRUMENT_KEYS, "kase::instrument");
    let arg_errors = arg_errors.map(|e| e.to_compile_error());
    let mut item = parse_macro_input!(item as Item);
    let mut rewriter = Rewriter {
        krate: args.crate_path.clone(),
    };
    let error = match &mut item {
        Item::Fn(f) => {
            instrument_fn_body(&mut rewriter, &mut f.block);
            None
        }
        Item::Impl(imp) => {
            for impl_item in &mut imp.items {
                if let syn::ImplItem::Fn(f) = impl_item {
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
    quote!(#arg_errors #error #item).into()
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
    } else if !sig.inputs.is_empty() {
        errors.push(syn::Error::new_spanned(
            &sig.inputs,
            "#[kase::test] functions take no parameters: \
             build the inputs inside the body",
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
