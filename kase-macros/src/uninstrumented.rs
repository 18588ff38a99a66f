//! A compile-time note for libraries whose operations kase cannot see.
//!
//! A `parking_lot` lock or a crossbeam / tokio channel in a model is not
//! instrumented: kase neither schedules around it nor sees it block, so the
//! model can pass while hiding the bug. Stable proc macros cannot emit a
//! warning, so the note is a `#[deprecated]` constant of the expansion,
//! used with the span of the crate's name in the user's code: the
//! `deprecated` lint then shows the note there.

use crate::rewrite;
use proc_macro2::{Ident, Span, TokenStream};
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
        rewrite::for_each_ident(tokens, &mut |trees, i, id| {
            if !rewrite::after_path_sep(trees, i) && rewrite::is_path_sep(trees, i + 1) {
                self.mention(id);
            }
        });
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

/// Names a path may start with that are not a suspect alias: std and
/// kase themselves, path keywords, and the module names kase's rewriting
/// already shadows in a body (`thread::spawn` with a module-level
/// `use std::thread;` is rewritten).
const NOT_ALIASES: &[&str] = &[
    "std", "core", "alloc", "kase", "crate", "self", "super", "Self", "thread", "sync", "atomic",
    "mpsc", "hint", "cell",
];

/// What a path through an alias of `std::sync`, `std::sync::atomic`,
/// `std::sync::mpsc` or `std::thread` names next.
const STD_ITEMS: &[&str] = &[
    "Mutex",
    "RwLock",
    "Condvar",
    "Barrier",
    "Once",
    "OnceLock",
    "LazyLock",
    "atomic",
    "mpsc",
    "AtomicBool",
    "AtomicI8",
    "AtomicI16",
    "AtomicI32",
    "AtomicI64",
    "AtomicIsize",
    "AtomicU8",
    "AtomicU16",
    "AtomicU32",
    "AtomicU64",
    "AtomicUsize",
    "AtomicPtr",
    "fence",
    "channel",
    "sync_channel",
    "spawn",
    "scope",
];

/// Paths like `s::Mutex` in a `#[kase::test]` body whose first segment is
/// neither declared in the body nor a name kase knows: most likely an alias
/// of a std module (`use std::sync as s;`) declared at module level, which
/// the attribute cannot see, so the body would run on real std and pass
/// silently. Each gets a note at its first mention.
#[derive(Default)]
pub(crate) struct AliasSuspects {
    /// Names the body declares (`use … as x`, `use …::x`, `mod x`).
    declared: Vec<String>,
    /// Suspect first segments, with the item named and the first mention.
    found: Vec<(String, String, Span)>,
}

impl AliasSuspects {
    /// The notes for `block`, a test body.
    pub(crate) fn notes(block: &syn::Block) -> TokenStream {
        let mut suspects = AliasSuspects::default();
        let mut declared = Declared::default();
        declared.visit_block(block);
        suspects.declared = declared.names;
        suspects.visit_block(block);
        suspects
            .found
            .iter()
            .map(|(alias, item, span)| alias_note(alias, item, *span))
            .collect()
    }
}

impl<'ast> Visit<'ast> for AliasSuspects {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() && path.segments.len() > 1 {
            let first = path.segments[0].ident.to_string();
            let second = path.segments[1].ident.to_string();
            let suspect = STD_ITEMS.contains(&second.as_str())
                && !NOT_ALIASES.contains(&first.as_str())
                && !CRATES.contains(&first.as_str())
                && !self.declared.contains(&first)
                && !self.found.iter().any(|(a, _, _)| *a == first);
            if suspect {
                self.found
                    .push((first, second, path.segments[0].ident.span()));
            }
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_item_use(&mut self, _: &'ast syn::ItemUse) {
        // Declarations, not uses (collected by `Declared`).
    }
}

/// The names a body declares for paths to start with.
#[derive(Default)]
struct Declared {
    names: Vec<String>,
}

impl<'ast> Visit<'ast> for Declared {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut roots = vec![&u.tree];
        while let Some(tree) = roots.pop() {
            match tree {
                syn::UseTree::Path(p) => roots.push(&p.tree),
                syn::UseTree::Name(n) => self.names.push(n.ident.to_string()),
                syn::UseTree::Rename(r) => self.names.push(r.rename.to_string()),
                syn::UseTree::Glob(_) => {}
                syn::UseTree::Group(g) => roots.extend(g.items.iter()),
            }
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        self.names.push(m.ident.to_string());
    }
}

/// The note for `alias::item`, at `span`.
fn alias_note(alias: &str, item: &str, span: Span) -> TokenStream {
    let message = format!(
        "`{alias}::{item}`: if `{alias}` is an alias of a std module (`use std::sync as \
         {alias};`) declared outside this function, kase cannot rewrite it and the model runs \
         on real std, unchecked; declare the `use` inside the function or write the std path \
         (if `{alias}` is a module of yours, `use` it inside the function to say so)"
    );
    let constant = format_ident!(
        "KASE_CANNOT_SEE_THROUGH_{}",
        alias.to_uppercase(),
        span = span
    );
    quote_spanned! {span=>
        const _: () = {
            #[deprecated(note = #message)]
            const #constant: () = ();
            #constant
        };
    }
}
