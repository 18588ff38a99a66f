//! Procedural macros of [kase](https://docs.rs/kase).

use proc_macro::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::{parse_macro_input, ItemFn};

/// Runs a zero-argument test function as a kase model: every interleaving
/// behaviour of its body is explored, and the test fails with kase's report
/// if one of them panics or deadlocks.
///
/// See the `kase` crate for an example.
///
/// This minimal version runs the body with `kase::model`; rewriting
/// `std::sync` paths in the body onto kase's shims comes later.
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut function = parse_macro_input!(item as ItemFn);
    let mut errors = Vec::new();
    if !args.is_empty() {
        let args = proc_macro2::TokenStream::from(args);
        errors.push(syn::Error::new(
            args.span(),
            "#[kase::test] takes no arguments yet",
        ));
    }
    let sig = &function.sig;
    if let Some(a) = &sig.asyncness {
        errors.push(syn::Error::new(
            a.span(),
            "#[kase::test] does not support `async fn` yet",
        ));
    }
    if !sig.inputs.is_empty() {
        errors.push(syn::Error::new(
            sig.inputs.span(),
            "#[kase::test] functions take no parameters",
        ));
    }
    if !sig.generics.params.is_empty() {
        errors.push(syn::Error::new(
            sig.generics.span(),
            "#[kase::test] functions cannot be generic",
        ));
    }
    let has_test_attr = function
        .attrs
        .iter()
        .any(|a| a.path().segments.last().is_some_and(|s| s.ident == "test"));
    let body = &function.block;
    let new_body: syn::Block = syn::parse_quote!({ ::kase::model(|| #body) });
    *function.block = new_body;
    let test_attr = (!has_test_attr).then(|| quote!(#[::core::prelude::v1::test]));
    let errors = errors.into_iter().map(|e| e.to_compile_error());
    quote!(#(#errors)* #test_attr #function).into()
}
