//! A compile-time note for libraries whose operations kase cannot see.
//!
//! A `parking_lot` lock or a crossbeam / tokio channel in a model is not
//! instrumented: kase neither schedules around it nor sees it block, so the
//! model can pass while hiding the bug. Stable proc macros cannot emit a
//! warning, so the note is a `#[deprecated]` constant of the expansion,
//! used with the span of the crate's name in the user's code: the
//! `deprecated` lint then shows the note there.

use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::{format_ident, quote_spanned};
use syn::visit::Visit;

/// The crates kase does not instrument that a model is likely to use for
/// synchronisation.
const CRATES: &[&str] = &[
    "parking_lot",
    "crossbeam",
    "crossbeam_channel",
    "crossbeam_utils",
    "tokio",
];

/// The note's items (empty if none of [`CRATES`] is named): for each crate
/// named in the code that `visit` walks, at its first mention.
pub(crate) fn notes(visit: impl FnOnce(&mut Mentions)) -> TokenStream {
    let mut mentions = Mentions::default();
    visit(&mut mentions);
    mentions
        .found
        .iter()
        .map(|(name, span)| note(name, *span))
        .collect()
}

/// `const _: () = { #[deprecated(note)] const C: () = (); C };` with the use
/// of `C` at `span`: an item, valid wherever the expansion puts it.
fn note(name: &str, span: Span) -> TokenStream {
    let message = format!(
        "kase does not instrument `{name}` (parking_lot locks, crossbeam and tokio \
         channels): it cannot see these operations, so the model may pass while hiding \
         a bug; use std::sync, which kase rewrites onto its shims"
    );
    let constant = format_ident!("KASE_CANNOT_SEE_{}", name.to_uppercase(), span = span);
    quote_spanned! {span=>
        const _: () = {
            #[deprecated(note = #message)]
            const #constant: () = ();
            #constant
        };
    }
}

/// The [`CRATES`] a piece of code names as a path's first segment (in
/// paths, `use` trees and macro tokens), each with its first mention.
#[derive(Default)]
pub(crate) struct Mentions {
    found: Vec<(&'static str, Span)>,
}

impl Mentions {
    fn mention(&mut self, ident: &Ident) {
        let Some(name) = CRATES.iter().find(|c| ident == *c) else {
            return;
        };
        if !self.found.iter().any(|(n, _)| n == name) {
            self.found.push((name, ident.span()));
        }
    }

    /// `name ::` not preceded by `::` (the start of a path), recursing into
    /// groups, for macro tokens.
    fn scan_tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        for (i, tree) in trees.iter().enumerate() {
            match tree {
                TokenTree::Group(g) => self.scan_tokens(g.stream()),
                TokenTree::Ident(id) => {
                    let after_sep = i >= 2 && crate::rewrite::is_path_sep(&trees, i - 2);
                    if !after_sep && crate::rewrite::is_path_sep(&trees, i + 1) {
                        self.mention(id);
                    }
                }
                _ => {}
            }
        }
    }
}

impl<'ast> Visit<'ast> for Mentions {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        // `parking_lot::Mutex`, not a lone local named `tokio`.
        if path.segments.len() > 1 {
            self.mention(&path.segments[0].ident);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut roots = vec![&u.tree];
        while let Some(tree) = roots.pop() {
            match tree {
                syn::UseTree::Path(p) => self.mention(&p.ident),
                syn::UseTree::Name(n) => self.mention(&n.ident),
                syn::UseTree::Rename(r) => self.mention(&r.ident),
                syn::UseTree::Glob(_) => {}
                syn::UseTree::Group(g) => roots.extend(g.items.iter()),
            }
        }
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        self.scan_tokens(mac.tokens.clone());
    }
}
