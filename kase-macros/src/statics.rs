//! `static` locks that restart with every execution.
//!
//! kase's `Mutex` and `RwLock` keep their lock state in the execution, but
//! the data they guard lives in the `static`. A `static` of one of them is
//! rewritten from `static X: Mutex<T> = <init>;` into
//! `static X: Mutex<T> = (<init>).__kase_static(|lock| lock.__kase_reset(<init>));`:
//! a `static`'s initializer is a constant expression, so evaluating it again
//! (at the lock's first use in each execution) gives the initial value.
//!
//! Only types that are certainly kase's get this (a type of the user's own
//! has no such method): a path ending in `sync::Mutex` / `sync::RwLock`, or
//! a bare name that [`bare_lock_names`] found to be kase's.

use syn::visit::Visit;
use syn::{Item, ItemStatic, StaticMutability, Type, UseTree};

/// The shims whose `static`s get a restart function.
const LOCKS: &[&str] = &["Mutex", "RwLock"];

/// Where the code being rewritten sits, for what a bare name denotes.
#[derive(Clone, Copy)]
pub(crate) enum Scope {
    /// A function body: kase shadows module-level imports of the shims there
    /// (`rewrite::shadowing_imports`), so a bare `Mutex` is kase's unless
    /// the body defines its own.
    Body,
    /// An inline module: a bare `Mutex` is kase's only if the module
    /// imports it through a `sync` path (`use std::sync::Mutex;`, rewritten).
    Module,
}

/// The bare names that denote kase's `Mutex` or `RwLock` in the code that
/// `visit` walks.
pub(crate) fn bare_lock_names(scope: Scope, visit: impl FnOnce(&mut Names)) -> Vec<String> {
    let mut names = Names::default();
    visit(&mut names);
    let mut bare: Vec<String> = names.via_sync.clone();
    if let Scope::Body = scope {
        bare.extend(LOCKS.iter().map(|l| l.to_string()));
    }
    bare.retain(|n| !names.other.contains(n));
    bare
}

/// Names brought into scope, by where they come from.
#[derive(Default)]
pub(crate) struct Names {
    /// Bound by a `use` of a path through `sync` to a lock shim.
    via_sync: Vec<String>,
    /// Bound any other way (an item, another `use`).
    other: Vec<String>,
}

impl<'ast> Visit<'ast> for Names {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        collect_use(&u.tree, &mut Vec::new(), self);
    }

    fn visit_item(&mut self, item: &'ast Item) {
        if let Some(ident) = crate::rewrite::type_item_ident(item) {
            self.other.push(ident.to_string());
        }
        syn::visit::visit_item(self, item);
    }
}

fn collect_use(tree: &UseTree, prefix: &mut Vec<String>, names: &mut Names) {
    let through_sync = |prefix: &[String]| prefix.iter().any(|p| p == "sync");
    match tree {
        UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            collect_use(&p.tree, prefix, names);
            prefix.pop();
        }
        UseTree::Name(n) => {
            let name = n.ident.to_string();
            if through_sync(prefix) && LOCKS.contains(&name.as_str()) {
                names.via_sync.push(name);
            } else {
                names.other.push(name);
            }
        }
        UseTree::Rename(r) => {
            let (name, bound) = (r.ident.to_string(), r.rename.to_string());
            if through_sync(prefix) && LOCKS.contains(&name.as_str()) {
                names.via_sync.push(bound);
            } else {
                names.other.push(bound);
            }
        }
        UseTree::Glob(_) => {}
        UseTree::Group(g) => {
            for t in &g.items {
                collect_use(t, prefix, names);
            }
        }
    }
}

/// Whether `ty` is certainly kase's `Mutex` or `RwLock`.
fn is_kase_lock(ty: &Type, bare_locks: &[String]) -> bool {
    let Type::Path(p) = ty else {
        return false;
    };
    if p.qself.is_some() {
        return false;
    }
    let segments: Vec<&syn::PathSegment> = p.path.segments.iter().collect();
    match segments.as_slice() {
        [only] if p.path.leading_colon.is_none() => bare_locks.iter().any(|b| only.ident == b),
        [.., module, last] => module.ident == "sync" && LOCKS.iter().any(|l| last.ident == l),
        _ => false,
    }
}

/// Gives a `static` of kase's `Mutex` or `RwLock` its restart function.
pub(crate) fn restart_static(item: &mut ItemStatic, bare_locks: &[String]) {
    if !matches!(item.mutability, StaticMutability::None) || !is_kase_lock(&item.ty, bare_locks) {
        return;
    }
    let init = &item.expr;
    *item.expr = syn::parse_quote! {
        (#init).__kase_static(|__kase_lock| __kase_lock.__kase_reset(#init))
    };
}
