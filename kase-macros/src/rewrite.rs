//! Rewriting `std` paths onto kase's shims.
//!
//! Every path that starts with one of the [`RULES`] prefixes (with or without
//! a leading `::`) is re-rooted under the kase crate path: `std::sync::Mutex`
//! becomes `::kase::sync::Mutex`, `core::sync::atomic::fence` becomes
//! `::kase::sync::atomic::fence`, and so on. This covers paths in
//! expressions, types, patterns and trait bounds, `use` declarations (a `use`
//! tree mixing rewritten and other paths is split into one `use` per leaf),
//! and the tokens of macro invocations (parsed as comma-separated expressions
//! or as statements when possible, otherwise rewritten token-wise).
//!
//! Macro paths are rewritten too: `std::thread_local!` by the rules, and a
//! bare `thread_local!` (std's, from the prelude) becomes
//! `::kase::thread_local!`, whose values are per model thread.
//!
//! Paths are rewritten whether or not kase has the item (every stable std
//! item under the rewritten paths has a counterpart today), so that a body
//! never silently runs an uninstrumented primitive: a missing shim is a
//! compile error, not a gap in the model.

use proc_macro2::{Group, Ident, Spacing, Span, TokenStream, TokenTree};
use quote::{quote, ToTokens};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, Item, ItemUse, Stmt, Token, UseTree};

/// `(std prefix, kase suffix)`: a path starting with the prefix is re-rooted
/// as `<crate>::<suffix>::<rest>`.
const RULES: &[(&[&str], &[&str])] = &[
    (&["std", "sync"], &["sync"]),
    (&["core", "sync"], &["sync"]),
    (&["alloc", "sync"], &["sync"]),
    (&["std", "thread"], &["thread"]),
    (&["std", "hint", "spin_loop"], &["hint", "spin_loop"]),
    (&["core", "hint", "spin_loop"], &["hint", "spin_loop"]),
    (&["std", "cell", "UnsafeCell"], &["cell", "UnsafeCell"]),
    (&["core", "cell", "UnsafeCell"], &["cell", "UnsafeCell"]),
    (&["std", "thread_local"], &["thread_local"]),
];

/// Modules that kase shims only in part: `(std module, kase module, the
/// items kase has)`. A `use` binding the module itself (`use std::cell as
/// c;`, `use std::hint;`) or a glob of it becomes a module (or glob) of std's
/// items with kase's on top, so that `c::UnsafeCell` is kase's.
const PARTIAL: &[(&[&str], &[&str], &[&str])] = &[
    (&["std", "cell"], &["cell"], &["UnsafeCell"]),
    (&["core", "cell"], &["cell"], &["UnsafeCell"]),
    (&["std", "hint"], &["hint"], &["spin_loop"]),
    (&["core", "hint"], &["hint"], &["spin_loop"]),
];

/// The [`PARTIAL`] entry for exactly this module path.
fn partial_module(full: &[&Ident]) -> Option<(&'static [&'static str], &'static [&'static str])> {
    PARTIAL.iter().find_map(|(module, kase, items)| {
        (full.len() == module.len() && module.iter().zip(full).all(|(m, s)| *s == m))
            .then_some((*kase, *items))
    })
}

/// Macros of std's prelude that kase replaces: a bare `name!(...)` becomes
/// `<crate>::<suffix>!(...)`.
const PRELUDE_MACROS: &[(&str, &[&str])] = &[("thread_local", &["thread_local"])];

/// The kase suffix for a bare prelude macro name.
fn prelude_macro(name: &Ident) -> Option<&'static [&'static str]> {
    PRELUDE_MACROS
        .iter()
        .find_map(|(n, suffix)| (name == n).then_some(*suffix))
}

/// The rule matching the first segments of a path, as
/// `(number of segments it replaces, kase suffix)`.
fn rule_for<'a>(
    mut segments: impl Iterator<Item = &'a Ident>,
) -> Option<(usize, &'static [&'static str])> {
    let first: Vec<&Ident> = segments.by_ref().take(3).collect();
    RULES.iter().find_map(|(prefix, suffix)| {
        (first.len() >= prefix.len() && prefix.iter().zip(&first).all(|(p, s)| *s == p))
            .then_some((prefix.len(), *suffix))
    })
}

/// The syntax-tree visitor doing the rewriting.
pub(crate) struct Rewriter {
    /// Where kase lives (`::kase` unless `crate = "..."`).
    pub(crate) krate: syn::Path,
    /// Bare names that denote kase's `Mutex` / `RwLock` in the input
    /// (`statics::bare_lock_names`): their `static`s restart.
    pub(crate) bare_locks: Vec<String>,
}

impl Rewriter {
    /// `<crate>::<suffix...>` as path segments, spanned at `span`.
    fn replacement(&self, suffix: &[&str], span: Span) -> syn::Path {
        let mut path = self.krate.clone();
        for s in suffix {
            path.segments
                .push(syn::PathSegment::from(Ident::new(s, span)));
        }
        path
    }

    /// Rewrites `path` in place; returns how many segments it gained (can be
    /// negative), for `<T as Trait>::f` position bookkeeping.
    fn rewrite_path(&self, path: &mut syn::Path) -> isize {
        let Some((n, suffix)) = rule_for(path.segments.iter().map(|s| &s.ident)) else {
            return 0;
        };
        // The replaced segments before the last are modules: generic
        // arguments there are impossible. The last one can be an item with
        // arguments (`std::cell::UnsafeCell<T>`, `UnsafeCell::<T>::new`):
        // they move onto the shim's name.
        if path
            .segments
            .iter()
            .take(n - 1)
            .any(|s| !s.arguments.is_none())
        {
            return 0;
        }
        let span = path.segments[0].ident.span();
        let old_len = path.segments.len();
        let mut new = self.replacement(suffix, span);
        if let Some(last) = new.segments.last_mut() {
            last.arguments = path.segments[n - 1].arguments.clone();
        }
        for segment in path.segments.iter().skip(n) {
            new.segments.push(segment.clone());
        }
        let gained = new.segments.len() as isize - old_len as isize;
        *path = new;
        gained
    }

    /// Rewrites a macro invocation's path: a bare prelude macro that kase
    /// replaces (`thread_local!`), or a std path (`std::thread_local!`).
    fn rewrite_macro_path(&self, path: &mut syn::Path) {
        if path.leading_colon.is_none() && path.segments.len() == 1 {
            let segment = &path.segments[0];
            if let Some(suffix) = prelude_macro(&segment.ident) {
                if segment.arguments.is_none() {
                    *path = self.replacement(suffix, segment.ident.span());
                    return;
                }
            }
        }
        self.rewrite_path(path);
    }

    /// Rewrites one `use` declaration into one or more; `None` if nothing in
    /// it needs rewriting (the item is then left exactly as written).
    fn rewrite_use(&self, item: &ItemUse) -> Option<Vec<Item>> {
        let mut leaves = Vec::new();
        flatten(&item.tree, &mut Vec::new(), &mut leaves);
        let needs = leaves.iter().any(|leaf| {
            let full = leaf.full_path();
            rule_for(full.iter().copied()).is_some() || partial_module(&full).is_some()
        });
        if !needs {
            return None;
        }
        if leaves.iter().any(|leaf| leaf.full_path().is_empty()) {
            return None;
        }
        let attrs = &item.attrs;
        let vis = &item.vis;
        let out = leaves
            .iter()
            .map(|leaf| {
                let full = leaf.full_path();
                if let Some((kase, items)) = partial_module(&full) {
                    return self.partial_use(item, leaf, &full, kase, items);
                }
                let (root, rest) = match rule_for(full.iter().copied()) {
                    Some((n, suffix)) => {
                        let p = self.replacement(suffix, full[0].span());
                        (quote!(#p), &full[n..])
                    }
                    None => {
                        let colon = item.leading_colon;
                        let first = full[0];
                        (quote!(#colon #first), &full[1..])
                    }
                };
                let tail = match &leaf.kind {
                    LeafKind::Name(_) => quote!(),
                    LeafKind::Rename(_, alias) => quote!(as #alias),
                    LeafKind::Glob => quote!(::*),
                    LeafKind::SelfIn(None) => quote!(::{self}),
                    LeafKind::SelfIn(Some(alias)) => quote!(::{self as #alias}),
                };
                let tokens = quote!(#(#attrs)* #vis use #root #(::#rest)* #tail;);
                syn::parse2::<Item>(tokens).expect("a rewritten use declaration parses")
            })
            .collect();
        Some(out)
    }

    /// A `use` leaf naming a [`PARTIAL`] module: a glob of it becomes the
    /// glob and kase's items; the module bound to a name becomes a module of
    /// that name holding them.
    fn partial_use(
        &self,
        item: &ItemUse,
        leaf: &Leaf,
        full: &[&Ident],
        kase: &[&str],
        items: &[&str],
    ) -> Item {
        let (attrs, vis) = (&item.attrs, &item.vis);
        let span = full[0].span();
        let kase = self.replacement(kase, span);
        let items: Vec<Ident> = items.iter().map(|i| Ident::new(i, span)).collect();
        let std = quote!(:: #(#full)::*);
        let name = match &leaf.kind {
            LeafKind::Glob => {
                let tokens = quote! {
                    #(#attrs)* #[allow(unused_imports)] #vis use #std::*;
                    #(#[allow(unused_imports)] #vis use #kase::#items;)*
                };
                // Two items; wrapped in a block-less group by the caller.
                return Item::Verbatim(tokens);
            }
            LeafKind::Name(n) => n,
            LeafKind::Rename(_, alias) | LeafKind::SelfIn(Some(alias)) => alias,
            LeafKind::SelfIn(None) => full[full.len() - 1],
        };
        syn::parse_quote! {
            #(#attrs)*
            #[allow(unused_imports, missing_docs)]
            #vis mod #name {
                pub use #std::*;
                #(pub use #kase::#items;)*
            }
        }
    }

    /// Rewrites a macro invocation's tokens: as comma-separated expressions
    /// if they parse so, else as statements, else token-wise.
    fn rewrite_macro_tokens(&mut self, tokens: &TokenStream) -> TokenStream {
        let parser = Punctuated::<Expr, Token![,]>::parse_terminated;
        if let Ok(mut exprs) = syn::parse::Parser::parse2(parser, tokens.clone()) {
            for expr in exprs.iter_mut() {
                self.visit_expr_mut(expr);
            }
            return exprs.into_token_stream();
        }
        if let Ok(mut stmts) = syn::parse::Parser::parse2(Block::parse_within, tokens.clone()) {
            self.rewrite_stmts(&mut stmts);
            return quote!(#(#stmts)*);
        }
        self.rewrite_tokens(tokens.clone())
    }

    /// Token-wise rewriting of `[::] std :: sync ...` sequences, recursing
    /// into groups, for macro input that is not expressions or statements.
    fn rewrite_tokens(&self, tokens: TokenStream) -> TokenStream {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut out = Vec::with_capacity(trees.len());
        let mut i = 0;
        while i < trees.len() {
            if let TokenTree::Group(g) = &trees[i] {
                let mut new = Group::new(g.delimiter(), self.rewrite_tokens(g.stream()));
                new.set_span(g.span());
                out.push(TokenTree::Group(new));
                i += 1;
                continue;
            }
            // A path start: not preceded by `::` continuing another path.
            let leading = is_path_sep(&trees, i);
            let start = if leading { i + 2 } else { i };
            let preceded = if leading {
                i >= 1
                    && (matches!(&trees[i - 1], TokenTree::Ident(_))
                        || matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '>'))
            } else {
                after_path_sep(&trees, i)
            };
            // A bare prelude macro invocation: `thread_local !`.
            if !leading && !preceded {
                if let (TokenTree::Ident(name), Some(TokenTree::Punct(bang))) =
                    (&trees[i], trees.get(i + 1))
                {
                    // `!` alone: not the `!=` of `thread_local != x`.
                    let is_bang = bang.as_char() == '!' && bang.spacing() == Spacing::Alone;
                    if let Some(suffix) = prelude_macro(name).filter(|_| is_bang) {
                        let p = self.replacement(suffix, name.span());
                        out.extend(p.into_token_stream());
                        i += 1;
                        continue;
                    }
                }
            }
            if !preceded {
                if let Some((consumed, suffix)) = match_rule_tokens(&trees, start) {
                    let span = trees[start].span();
                    let p = self.replacement(suffix, span);
                    out.extend(p.into_token_stream());
                    i = start + consumed;
                    continue;
                }
            }
            out.push(trees[i].clone());
            i += 1;
        }
        out.into_iter().collect()
    }

    /// Rewrites a statement list, splitting `use` declarations as needed.
    pub(crate) fn rewrite_stmts(&mut self, stmts: &mut Vec<Stmt>) {
        let old = std::mem::take(stmts);
        for mut stmt in old {
            if let Stmt::Item(Item::Use(u)) = &stmt {
                if let Some(items) = self.rewrite_use(u) {
                    stmts.extend(items.into_iter().map(Stmt::Item));
                    continue;
                }
            }
            self.visit_stmt_mut(&mut stmt);
            stmts.push(stmt);
        }
    }

    /// Rewrites an item list (a module's content), splitting `use`
    /// declarations as needed.
    pub(crate) fn rewrite_items(&mut self, items: &mut Vec<Item>) {
        let old = std::mem::take(items);
        for mut item in old {
            if let Item::Use(u) = &item {
                if let Some(new) = self.rewrite_use(u) {
                    items.extend(new);
                    continue;
                }
            }
            self.visit_item_mut(&mut item);
            items.push(item);
        }
    }
}

/// Calls `f` with each identifier in `tokens`, recursing into groups, in
/// order, with the token trees it stands among and its index there: for
/// scanning macro tokens, which syn does not parse.
pub(crate) fn for_each_ident(tokens: TokenStream, f: &mut impl FnMut(&[TokenTree], usize, &Ident)) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, tree) in trees.iter().enumerate() {
        match tree {
            TokenTree::Group(g) => for_each_ident(g.stream(), f),
            TokenTree::Ident(id) => f(&trees, i, id),
            _ => {}
        }
    }
}

/// Whether the token at `i` follows a `::` (is not the start of a path).
pub(crate) fn after_path_sep(trees: &[TokenTree], i: usize) -> bool {
    i >= 2 && is_path_sep(trees, i - 2)
}

/// Whether the tokens at `i` are a `::`.
pub(crate) fn is_path_sep(trees: &[TokenTree], i: usize) -> bool {
    matches!(
        (trees.get(i), trees.get(i + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
    )
}

/// If the tokens at `start` are `ident :: ident [:: ident]` matching a rule,
/// how many tokens the matched prefix spans and the rule's kase suffix.
fn match_rule_tokens(
    trees: &[TokenTree],
    start: usize,
) -> Option<(usize, &'static [&'static str])> {
    let mut idents = Vec::new();
    let mut j = start;
    while idents.len() < 3 {
        match trees.get(j) {
            Some(TokenTree::Ident(id)) => idents.push(id.clone()),
            _ => break,
        }
        if is_path_sep(trees, j + 1) {
            j += 3;
        } else {
            break;
        }
    }
    let (n, suffix) = rule_for(idents.iter())?;
    // n idents and the n - 1 separators between them.
    Some((n + 2 * (n - 1), suffix))
}

struct Leaf {
    prefix: Vec<Ident>,
    kind: LeafKind,
}

enum LeafKind {
    Name(Ident),
    Rename(Ident, Ident),
    Glob,
    /// `prefix::{self}` or `prefix::{self as alias}`.
    SelfIn(Option<Ident>),
}

impl Leaf {
    /// The path the leaf imports (for rule matching): the prefix and the
    /// leaf's own name, if any.
    fn full_path(&self) -> Vec<&Ident> {
        let mut p: Vec<&Ident> = self.prefix.iter().collect();
        match &self.kind {
            LeafKind::Name(n) | LeafKind::Rename(n, _) if n != "self" => p.push(n),
            _ => {}
        }
        p
    }
}

fn flatten(tree: &UseTree, prefix: &mut Vec<Ident>, out: &mut Vec<Leaf>) {
    match tree {
        UseTree::Path(p) => {
            prefix.push(p.ident.clone());
            flatten(&p.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(n) if n.ident == "self" => out.push(Leaf {
            prefix: prefix.clone(),
            kind: LeafKind::SelfIn(None),
        }),
        UseTree::Rename(r) if r.ident == "self" => out.push(Leaf {
            prefix: prefix.clone(),
            kind: LeafKind::SelfIn(Some(r.rename.clone())),
        }),
        UseTree::Name(n) => out.push(Leaf {
            prefix: prefix.clone(),
            kind: LeafKind::Name(n.ident.clone()),
        }),
        UseTree::Rename(r) => out.push(Leaf {
            prefix: prefix.clone(),
            kind: LeafKind::Rename(r.ident.clone(), r.rename.clone()),
        }),
        UseTree::Glob(_) => out.push(Leaf {
            prefix: prefix.clone(),
            kind: LeafKind::Glob,
        }),
        UseTree::Group(g) => {
            for t in &g.items {
                flatten(t, prefix, out);
            }
        }
    }
}

/// The constructors of `Arc` whose allocations kase tracks for leaks.
const ARC_CONSTRUCTORS: &[&str] = &["new", "new_cyclic"];

/// The functions of `Arc` whose answers the leak check's `Weak` would
/// change, answered by kase without it (`shim/arc.rs`).
const ARC_COUNTS: &[&str] = &["get_mut", "weak_count", "make_mut"];

/// The function `call` calls if it is one of `Arc`'s named `names`, with
/// `Arc` bare (`Arc::<T>::new` too) or behind a path ending in `sync`
/// (`std::sync::Arc::new`, already rewritten). Whether that `Arc` is really
/// std's is decided when the expansion is type-checked (`shim/arc.rs`).
fn arc_function(call: &syn::ExprCall, names: &[&str]) -> Option<String> {
    let Expr::Path(func) = &*call.func else {
        return None;
    };
    arc_path_function(func, names)
}

/// [`arc_function`] of a path: the function it names, called or not.
fn arc_path_function(func: &syn::ExprPath, names: &[&str]) -> Option<String> {
    if func.qself.is_some() {
        return None;
    }
    let segments: Vec<&syn::PathSegment> = func.path.segments.iter().collect();
    let [before @ .., arc, function] = segments.as_slice() else {
        return None;
    };
    let is_arc = arc.ident == "Arc"
        && names.iter().any(|c| function.ident == c)
        && function.arguments.is_none()
        && match before.last() {
            None => func.path.leading_colon.is_none(),
            Some(module) => module.ident == "sync",
        };
    is_arc.then(|| function.ident.to_string())
}

/// Whether `call` is `Arc::new(..)` or `Arc::new_cyclic(..)`
/// ([`arc_function`]).
fn is_arc_constructor(call: &syn::ExprCall) -> bool {
    arc_function(call, ARC_CONSTRUCTORS).is_some()
}

/// The span of the `Arc` in a path to one of its functions
/// ([`arc_path_function`]), called or not.
fn arc_segment_span(func: &Expr) -> Span {
    match func {
        Expr::Path(func) if func.path.segments.len() >= 2 => func.path.segments
            [func.path.segments.len() - 2]
            .ident
            .span(),
        other => other.span(),
    }
}

impl VisitMut for Rewriter {
    fn visit_item_static_mut(&mut self, item: &mut syn::ItemStatic) {
        visit_mut::visit_item_static_mut(self, item);
        crate::statics::restart_static(item, &self.bare_locks);
    }

    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        match expr {
            // The constructor's own path is rewritten below as part of the
            // call, not as a function value.
            Expr::Call(call) if is_arc_constructor(call) => {
                for a in &mut call.attrs {
                    self.visit_attribute_mut(a);
                }
                if let Expr::Path(func) = &mut *call.func {
                    self.visit_expr_path_mut(func);
                }
                for arg in &mut call.args {
                    self.visit_expr_mut(arg);
                }
            }
            _ => visit_mut::visit_expr_mut(self, expr),
        }
        if let Expr::Path(func) = &*expr {
            if arc_path_function(func, ARC_CONSTRUCTORS).is_some() {
                // `Arc::new` passed as a function (`.map(Arc::new)`): a
                // closure that makes and tracks the `Arc` the same way.
                let krate = &self.krate;
                let span = arc_segment_span(expr);
                *expr = syn::parse_quote_spanned! {span=>
                    |value| {
                        #[allow(unused_imports)]
                        use #krate::__private::{PassThrough as _, TrackArc as _};
                        (&#krate::__private::Wrap::new(#func(value))).__kase_track()
                    }
                };
                return;
            }
        }
        if let Expr::Call(call) = expr {
            if is_arc_constructor(call) {
                // The leak check of `shim/arc.rs`: the value is still std's
                // `Arc`; the location reported is the call's.
                let krate = &self.krate;
                // The `Arc` segment keeps the user's span even when the
                // path before it was rewritten (`std::sync::` -> kase's).
                let span = arc_segment_span(&call.func);
                *expr = syn::parse_quote_spanned! {span=>
                    {
                        #[allow(unused_imports)]
                        use #krate::__private::{PassThrough as _, TrackArc as _};
                        (&#krate::__private::Wrap::new(#call)).__kase_track()
                    }
                };
            } else if let (Some(function), [arg]) = (
                arc_function(call, ARC_COUNTS),
                call.args.iter().collect::<Vec<_>>().as_slice(),
            ) {
                // The leak check's `Weak` is not the program's: std's `Arc`
                // answers without it (`shim/arc.rs`); any other type named
                // `Arc` gets the call as written.
                let krate = &self.krate;
                let span = arc_segment_span(&call.func);
                let func = &call.func;
                let method = syn::Ident::new(&format!("__kase_{function}"), span);
                *expr = syn::parse_quote_spanned! {span=>
                    {
                        #[allow(unused_imports)]
                        use #krate::__private::{
                            ArcGetMut as _, ArcMakeMut as _, ArcWeakCount as _,
                            PassThroughCall as _,
                        };
                        (&#krate::__private::Wrap::new(#arg)).#method(#func)
                    }
                };
            }
        }
    }

    fn visit_path_mut(&mut self, path: &mut syn::Path) {
        self.rewrite_path(path);
        visit_mut::visit_path_mut(self, path);
    }

    fn visit_expr_path_mut(&mut self, e: &mut syn::ExprPath) {
        for a in &mut e.attrs {
            self.visit_attribute_mut(a);
        }
        if let Some(q) = &mut e.qself {
            self.visit_type_mut(&mut q.ty);
        }
        let gained = self.rewrite_path(&mut e.path);
        adjust_qself(&mut e.qself, gained);
        visit_mut::visit_path_mut(self, &mut e.path);
    }

    fn visit_type_path_mut(&mut self, t: &mut syn::TypePath) {
        if let Some(q) = &mut t.qself {
            self.visit_type_mut(&mut q.ty);
        }
        let gained = self.rewrite_path(&mut t.path);
        adjust_qself(&mut t.qself, gained);
        visit_mut::visit_path_mut(self, &mut t.path);
    }

    fn visit_block_mut(&mut self, block: &mut Block) {
        self.rewrite_stmts(&mut block.stmts);
    }

    fn visit_item_mod_mut(&mut self, m: &mut syn::ItemMod) {
        if let Some((_, items)) = &mut m.content {
            self.rewrite_items(items);
        }
    }

    fn visit_item_use_mut(&mut self, _: &mut ItemUse) {
        // Handled (and split) by `rewrite_stmts` / `rewrite_items`.
    }

    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        self.rewrite_macro_path(&mut mac.path);
        visit_mut::visit_path_mut(self, &mut mac.path);
        mac.tokens = self.rewrite_macro_tokens(&mac.tokens);
    }

    fn visit_attribute_mut(&mut self, _: &mut syn::Attribute) {
        // Attributes (`#[cfg]`, `#[allow]`, docs) are left as written.
    }
}

fn adjust_qself(qself: &mut Option<syn::QSelf>, gained: isize) {
    if let Some(q) = qself {
        if q.position > 0 {
            q.position = q.position.saturating_add_signed(gained);
        }
    }
}

/// The names a body can use without a path that are shadowed by kase's
/// shims, with the module of `<crate>` they come from. `Ordering`, `LockResult`,
/// `PoisonError`, `TryLockError` and mpsc's error types are std's own types
/// re-exported by kase: no need to shadow. The bare names of `mpsc`'s items
/// (`channel`, `Sender`, `Receiver`, ...) are not shadowed: a module-level
/// import of them is as likely to be the user's own channel under test;
/// the `mpsc` module is.
const SHADOWED: &[(&str, &[&str])] = &[
    ("Arc", &["sync"]),
    ("Weak", &["sync"]),
    ("Mutex", &["sync"]),
    ("MutexGuard", &["sync"]),
    ("RwLock", &["sync"]),
    ("RwLockReadGuard", &["sync"]),
    ("RwLockWriteGuard", &["sync"]),
    ("Condvar", &["sync"]),
    ("WaitTimeoutResult", &["sync"]),
    ("UnsafeCell", &["cell"]),
    ("Barrier", &["sync"]),
    ("Once", &["sync"]),
    ("OnceLock", &["sync"]),
    ("LazyLock", &["sync"]),
    ("mpsc", &["sync"]),
    ("atomic", &["sync"]),
    ("AtomicBool", &["sync", "atomic"]),
    ("AtomicI8", &["sync", "atomic"]),
    ("AtomicI16", &["sync", "atomic"]),
    ("AtomicI32", &["sync", "atomic"]),
    ("AtomicI64", &["sync", "atomic"]),
    ("AtomicIsize", &["sync", "atomic"]),
    ("AtomicU8", &["sync", "atomic"]),
    ("AtomicU16", &["sync", "atomic"]),
    ("AtomicU32", &["sync", "atomic"]),
    ("AtomicU64", &["sync", "atomic"]),
    ("AtomicUsize", &["sync", "atomic"]),
    ("AtomicPtr", &["sync", "atomic"]),
    ("fence", &["sync", "atomic"]),
    ("thread", &[]),
    ("spin_loop", &["hint"]),
];

/// Names that are modules: they count as used only as a path prefix
/// (`thread::spawn`), not alone (`thread` alone is likely a local variable).
const MODULES: &[&str] = &["atomic", "mpsc", "thread"];

/// Shadowing of names imported at module level, for a (rewritten) body.
///
/// Returns `(keep, shadow)`: `shadow` imports the shim for every name of
/// [`SHADOWED`] that the body uses without a path and does not define
/// itself; `keep` is `use Name as _;` for each of them, to be placed in an
/// enclosing block, so that the module-level import the body shadows (say
/// `use std::sync::Mutex;`) still counts as used and does not warn.
pub(crate) fn shadowing_imports(krate: &syn::Path, body: &Block) -> (TokenStream, TokenStream) {
    let mut scan = Scan::default();
    syn::visit::Visit::visit_block(&mut scan, body);
    let mut keep = TokenStream::new();
    let mut shadow = TokenStream::new();
    if scan.glob {
        // A glob import in the body (`use std::sync::*;`, now kase's) already
        // shadows the module's names; and which names it brings is unknown.
        return (keep, shadow);
    }
    for (name, module) in SHADOWED {
        if !scan.used.iter().any(|u| u == name) || scan.defined.iter().any(|d| d == name) {
            continue;
        }
        let ident = Ident::new(name, Span::call_site());
        let module = module.iter().map(|m| Ident::new(m, Span::call_site()));
        keep.extend(quote!(#[allow(unused_imports)] use #ident as _;));
        shadow.extend(quote!(#[allow(unused_imports)] use #krate #(::#module)* :: #ident;));
    }
    (keep, shadow)
}

/// The name a type-like item defines (a struct, enum, union, trait or type
/// alias), if `item` is one.
pub(crate) fn type_item_ident(item: &Item) -> Option<&Ident> {
    match item {
        Item::Enum(i) => Some(&i.ident),
        Item::Struct(i) => Some(&i.ident),
        Item::Trait(i) => Some(&i.ident),
        Item::Type(i) => Some(&i.ident),
        Item::Union(i) => Some(&i.ident),
        _ => None,
    }
}

/// Collects the names of [`SHADOWED`] a body uses without a path, and the
/// names it defines itself (local `use`s, items, bindings).
#[derive(Default)]
struct Scan {
    used: Vec<String>,
    defined: Vec<String>,
    glob: bool,
}

impl Scan {
    fn candidate(name: &Ident) -> Option<&'static str> {
        SHADOWED.iter().map(|(n, _)| *n).find(|n| name == n)
    }

    fn define(&mut self, name: &Ident) {
        self.defined.push(name.to_string());
    }

    fn scan_tokens(&mut self, tokens: TokenStream) {
        for_each_ident(tokens, &mut |trees, i, id| {
            let Some(name) = Self::candidate(id) else {
                return;
            };
            let after_dot =
                i >= 1 && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '.');
            let prefix = is_path_sep(trees, i + 1);
            if !after_path_sep(trees, i) && !after_dot && (prefix || !MODULES.contains(&name)) {
                self.used.push(name.to_string());
            }
        });
    }
}

impl<'ast> syn::visit::Visit<'ast> for Scan {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() {
            if let Some(name) = path
                .segments
                .first()
                .and_then(|s| Self::candidate(&s.ident))
            {
                if path.segments.len() > 1 || !MODULES.contains(&name) {
                    self.used.push(name.to_string());
                }
            }
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        self.scan_tokens(mac.tokens.clone());
    }

    fn visit_use_path(&mut self, u: &'ast syn::UsePath) {
        // `use a::b::{self}` defines `b`.
        let defines_self = match &*u.tree {
            UseTree::Name(n) => n.ident == "self",
            UseTree::Group(g) => g
                .items
                .iter()
                .any(|t| matches!(t, UseTree::Name(n) if n.ident == "self")),
            _ => false,
        };
        if defines_self {
            self.define(&u.ident);
        }
        syn::visit::visit_use_path(self, u);
    }

    fn visit_use_glob(&mut self, _: &'ast syn::UseGlob) {
        self.glob = true;
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        // A module in the body is its own scope: the body's imports do not
        // reach into it.
        self.define(&m.ident);
    }

    fn visit_use_name(&mut self, u: &'ast syn::UseName) {
        self.define(&u.ident);
    }

    fn visit_use_rename(&mut self, u: &'ast syn::UseRename) {
        self.define(&u.rename);
    }

    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        // A binding is a value: it hides the functions (`fence`), not the
        // types or modules (`let thread = ...; thread::spawn(...)` is fine).
        let name = p.ident.to_string();
        if name == "fence" || name == "spin_loop" {
            self.define(&p.ident);
        }
        syn::visit::visit_pat_ident(self, p);
    }

    fn visit_item(&mut self, item: &'ast Item) {
        let ident = type_item_ident(item).or(match item {
            Item::Const(i) => Some(&i.ident),
            Item::Fn(i) => Some(&i.sig.ident),
            Item::Static(i) => Some(&i.ident),
            _ => None,
        });
        if let Some(ident) = ident {
            self.define(ident);
        }
        syn::visit::visit_item(self, item);
    }
}
